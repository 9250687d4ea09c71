#include "trace_context.h"

#include <string>
#include <vector>

#include "arg_check.h"
#include "clock.h"
#include "frozen_view.h"
#include "span_ids.h"
#include "tracer_binding.h"

namespace hotspan_addon::trace_context {

namespace {

constexpr size_t kIdsIn = 4;   // trace hi, trace lo, parent wire, parent span
constexpr size_t kIdsOut = 5;  // trace hi, trace lo, span, parent, flags | resolved << 8
constexpr size_t kMaxTracestate = 512;  // W3C: at most 512 characters are propagated

inline TracerBinding& Self(const Napi::CallbackInfo& info) {
  return *static_cast<TracerBinding*>(info.Data());
}

// The context arguments at `at` (ids, flags, tracestate).
struct Given {
  hotspan::StoredContext context;
  uint64_t parent_span = 0;
};

Given ArgGiven(const Napi::CallbackInfo& info, size_t at) {
  Napi::Value v = info[at];
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array ||
      v.As<Napi::TypedArray>().ElementLength() != kIdsIn) {
    ThrowArgTypeCxx(info.Env(), "ids", "a BigUint64Array of 4", v);
  }
  Napi::BigUint64Array ids = v.As<Napi::BigUint64Array>();
  Given g;
  g.context.trace = hotspan::TraceId{ids[0], ids[1]};
  g.context.parent_wire = ids[2];
  g.parent_span = ids[3];
  const uint32_t flags = ARG_UINT32(at + 1, "flags");
  if (flags > 0xFF) throw Napi::RangeError::New(info.Env(), "hotspan: flags must be a byte (got " + std::to_string(flags) + ")");
  g.context.flags = static_cast<uint8_t>(flags);
  g.context.tracestate = ARG_OPT_STRING(at + 2, "tracestate");
  if (g.context.tracestate.size() > kMaxTracestate) g.context.tracestate.clear();
  return g;
}

Napi::Value IdsOut(Napi::Env env, const std::vector<hotspan::SpanIds>& all) {
  Napi::BigUint64Array out = Napi::BigUint64Array::New(env, all.size() * kIdsOut);
  size_t k = 0;
  for (const hotspan::SpanIds& x : all) {
    out[k++] = x.trace.hi;
    out[k++] = x.trace.lo;
    out[k++] = x.span;
    out[k++] = x.parent;
    out[k++] = x.flags | (x.resolved ? 0x100u : 0u);
  }
  return out;
}

}  // namespace

Napi::Value BeginContext(const Napi::CallbackInfo& info) {
  const uint32_t name = ARG_UINT32(0, "nameId");
  std::string attrs = ARG_OPT_STRING(1, "attrsJson");
  const Given g = ArgGiven(info, 2);
  TracerBinding& b = Self(info);
  const hotspan::Status s = hotspan::begin_in_context(*b.thread, name, hotspan::clock::now_ticks(),
                                                      std::move(attrs), &g.context, g.parent_span);
  return Napi::Number::New(info.Env(), static_cast<int>(s));
}

Napi::Value AsyncBeginContext(const Napi::CallbackInfo& info) {
  const uint32_t track = ARG_UINT32(0, "track");
  const uint32_t name = ARG_UINT32(1, "nameId");
  std::string attrs = ARG_OPT_STRING(2, "attrsJson");
  const Given g = ArgGiven(info, 3);
  const uint64_t token = Self(info).tracer->async_begin(track, name, hotspan::clock::now_ticks(),
                                                        std::move(attrs), g.parent_span, &g.context);
  return Napi::Number::New(info.Env(), static_cast<double>(token));
}

Napi::Value OpenIds(const Napi::CallbackInfo& info) {
  TracerBinding& b = Self(info);
  return IdsOut(info.Env(), {hotspan::open_span_ids(*b.thread, b.tracer->id_salt())});
}

Napi::Value SpanIds(const Napi::CallbackInfo& info) {
  FrozenView& view = ArgFrozenView(info, 0, "view");
  std::vector<std::vector<hotspan::SpanIds>> ids;
  hotspan::resolve_span_ids(view.snapshot, Self(info).tracer->id_salt(), ids);
  std::vector<hotspan::SpanIds> flat;
  flat.reserve(view.query.size());
  for (auto& t : ids) flat.insert(flat.end(), t.begin(), t.end());
  return IdsOut(info.Env(), flat);
}

Napi::Value IdSalt(const Napi::CallbackInfo& info) {
  return Napi::BigInt::New(info.Env(), Self(info).tracer->id_salt());
}

}  // namespace hotspan_addon::trace_context
