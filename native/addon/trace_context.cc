#include "trace_context.h"
#include "tracer_object.h"

#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "arg_check.h"
#include "record/clock.h"
#include "frozen_view.h"
#include "hot_path.h"
#include "record/span_ids.h"
#include "record/trace_id.h"
#include "tracer_binding.h"

namespace hotspan_addon::trace_context {

namespace {

constexpr size_t kIdsIn = 4;   // trace hi, trace lo, parent wire, parent span
constexpr size_t kIdsOut = 5;  // trace hi, trace lo, span, parent, flags | resolved << 8
constexpr size_t kMaxTracestate = 512;  // W3C: at most 512 characters are propagated

// Every method here is a cold one, on the shared prototype (tracer_object.h).
inline TracerBinding& Self(const Napi::CallbackInfo& info) { return BindingOf(info.Env(), info.This()); }

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

// kIdsOut values per SpanIds, then `extra` more slots (left 0) for the caller.
Napi::BigUint64Array IdsOut(Napi::Env env, const std::vector<hotspan::SpanIds>& all, size_t extra = 0) {
  Napi::BigUint64Array out = Napi::BigUint64Array::New(env, all.size() * kIdsOut + extra);
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
  TracerBinding& b = Self(info);
  const uint64_t token = b.tracer->async_begin(track, name, hotspan::clock::now_ticks(), attrs,
                                               g.parent_span, &b.async_caller, &g.context);
  return Napi::Value(info.Env(), hot::TokenValue(info.Env(), token));
}

Napi::Value OpenIds(const Napi::CallbackInfo& info) {
  TracerBinding& b = Self(info);
  Napi::BigUint64Array out = IdsOut(info.Env(), {hotspan::open_span_ids(*b.thread, b.tracer->id_salt(), b.tracer->sampler())}, 1);
  const uint32_t local = hotspan::innermost_local(*b.thread);
  out[kIdsOut] = local == 0 ? 0 : hotspan::make_span_id(hotspan::timeline_id(*b.thread), local);
  return out;
}

Napi::Value IdsOf(const Napi::CallbackInfo& info) {
  const double d = ARG_NUMBER(0, "span");
  // Span ids of JS's tracks and threads stay below 2^53.
  if (!(d >= 1 && d <= 9007199254740991.0) || std::floor(d) != d) {
    throw Napi::RangeError::New(info.Env(), "hotspan: span must be a span id, got " + std::to_string(d));
  }
  const auto span = static_cast<uint64_t>(d);
  const uint64_t salt = Self(info).tracer->id_salt();
  const hotspan::TraceId root = hotspan::trace_id::derived_trace_id(salt, span);
  Napi::BigUint64Array out = Napi::BigUint64Array::New(info.Env(), 4);
  out[0] = hotspan::trace_id::wire_span_id(salt, span);
  out[1] = root.hi;
  out[2] = root.lo;
  out[3] = hotspan::sampler::trace_flags(Self(info).tracer->sampler(), root, false, 0);
  return out;
}

Napi::Value SpanIds(const Napi::CallbackInfo& info) {
  FrozenView& view = ArgFrozenView(info, 0, "view");
  const auto& ids = view.span_ids(Self(info).tracer->id_salt(), Self(info).tracer->sampler());
  std::vector<hotspan::SpanIds> flat;
  flat.reserve(view.query.size());
  for (const auto& t : ids) flat.insert(flat.end(), t.begin(), t.end());
  return IdsOut(info.Env(), flat);
}

Napi::Value SpanTracestates(const Napi::CallbackInfo& info) {
  FrozenView& view = ArgFrozenView(info, 0, "view");
  const auto& ids = view.span_ids(Self(info).tracer->id_salt(), Self(info).tracer->sampler());
  Napi::Env env = info.Env();
  Napi::Array out = Napi::Array::New(env);
  // The spans of one trace share its context: one JS string per context.
  std::unordered_map<const hotspan::StoredContext*, Napi::Value> strings;
  uint32_t index = 0, at = 0;
  for (const auto& t : ids) {
    for (const hotspan::SpanIds& x : t) {
      if (x.context != nullptr && !x.context->tracestate.empty()) {
        auto it = strings.find(x.context);
        if (it == strings.end()) it = strings.emplace(x.context, Napi::String::New(env, x.context->tracestate)).first;
        out.Set(at++, Napi::Number::New(env, index));
        out.Set(at++, it->second);
      }
      ++index;
    }
  }
  return out;
}

Napi::Value AsyncFinish(const Napi::CallbackInfo& info) {
  const int64_t now = hotspan::clock::now_ticks();
  const double d = ARG_NUMBER(0, "token");
  const uint32_t flags = ARG_UINT32(1, "flags");
  const double start_ms = ARG_NUMBER(2, "startMs");
  const double end_ms = ARG_NUMBER(3, "endMs");
  const double name = ARG_NUMBER(4, "nameId");
  TracerBinding& b = Self(info);
  hotspan::AsyncEndChanges c;
  // Given times: ms on the performance.now() axis to CLOCK_MONOTONIC ns; the
  // track converts them to ticks as its readers convert back (AsyncEndChanges).
  auto ns_at = [&](double ms) { return b.tracer->origin_ns() + std::llround(ms * 1e6); };
  if (std::isfinite(start_ms)) {
    c.has_start = true;
    c.start_ns = ns_at(start_ms);
  }
  if (std::isfinite(end_ms)) {
    c.has_end = true;
    c.end_ns = ns_at(end_ms);
  }
  if (name >= 0) c.name = static_cast<uint32_t>(name);
  if (!info[5].IsUndefined()) {
    c.has_attrs = true;
    c.attrs_json = ARG_STRING(5, "attrsJson");
  }
  const hotspan::Status s = b.tracer->async_end(hot::TokenOf(d), now, static_cast<uint16_t>(flags), std::move(c));
  return Napi::Number::New(info.Env(), static_cast<int>(s));
}

Napi::Value IdSalt(const Napi::CallbackInfo& info) {
  return Napi::BigInt::New(info.Env(), Self(info).tracer->id_salt());
}

}  // namespace hotspan_addon::trace_context
