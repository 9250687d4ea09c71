#include "hot_path.h"

#include <string>
#include <utility>

#include "arg_check.h"
#include "async_args.h"
#include "record/async_fast.h"
#include "record/clock.h"
#include "external_view.h"
#include "record/thread_state.h"  // the core's inline fast::begin/end
#include "tracer_binding.h"

namespace hotspan_addon::hot {

// The clock is read last in begin* and first in end*, so argument handling
// stays outside the span. Times are raw ticks (the tracer is TimeUnit::kTicks).

bool U32ArgFailed(napi_env env, napi_value v, const char* arg) {
  ThrowArgType(env, arg, "a number", v);
  return false;
}

napi_value Begin(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  TracerBinding& b = ReadArgs<1>(env, info, argv);
  uint32_t name;
  if (!U32Arg(env, argv[0], "nameId", &name)) return nullptr;
  // undefined when the span opened; otherwise the status (closed, unknown
  // name, or a stack already 65,535 deep), for the facade to throw.
  return EndResult(env, hotspan::fast::begin(*b.thread, name, hotspan::clock::now_ticks()));
}

napi_value BeginAttrs(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  TracerBinding& b = ReadArgs<2>(env, info, argv);
  uint32_t name;
  if (!U32Arg(env, argv[0], "nameId", &name)) return nullptr;
  size_t len;
  if (napi_get_value_string_utf8(env, argv[1], nullptr, 0, &len) != napi_ok) {
    return ThrowArgType(env, "attrsJson", "a string", argv[1]);
  }
  // Straight into the thread's attribute bytes (thread_state.h).
  hotspan::ByteStack& bytes = b.thread->attr_bytes;
  const size_t mark = bytes.size();
  char* p = bytes.grow(len + 1);  // room for the terminator Node-API writes
  napi_get_value_string_utf8(env, argv[1], p, len + 1, &len);
  bytes.cut(mark + len);
  const int64_t now = hotspan::clock::now_ticks();
  return StatusValue(env, hotspan::begin_with_attr_bytes(*b.thread, name, now, mark));
}

bool TrackAndName(napi_env env, napi_value* argv, uint32_t* track, uint32_t* name) {
  return U32Arg(env, argv[0], "track", track) && U32Arg(env, argv[1], "nameId", name);
}

// Async spans: raw Node-API as well, since traceAsync() makes one of each
// per span. Tokens are track id << 32 | local id: exact in a double while
// the track id is below 2^21; anything else is no token. A begin answers the
// local id only (TokenValue).
napi_value AsyncBegin(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  size_t argc = 3;
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  TracerBinding& b = *static_cast<TracerBinding*>(data);
  uint32_t track, name;
  if (!TrackAndName(env, argv, &track, &name)) return nullptr;
  std::string attrs;
  napi_valuetype t = napi_undefined;
  // No third argument (the facade's span without attributes): nothing to read.
  if (argc >= 3) napi_typeof(env, argv[2], &t);
  if (t != napi_undefined) {
    size_t len;
    if (napi_get_value_string_utf8(env, argv[2], nullptr, 0, &len) != napi_ok) {
      return ThrowArgType(env, "attrsJson", "a string", argv[2]);
    }
    if (len != 0) {  // "" is no attributes
      attrs.resize(len + 1);
      napi_get_value_string_utf8(env, argv[2], &attrs[0], len + 1, &len);
      attrs.resize(len);
    }
  }
  return TokenValue(env, hotspan::fast::async_begin(*b.tracer, b.async_caller, track, name,
                                                    hotspan::clock::now_ticks(), attrs));
}

napi_value AsyncEnd(napi_env env, napi_callback_info info) {
  const int64_t now = hotspan::clock::now_ticks();
  napi_value argv[2];
  TracerBinding& b = ReadArgs<2>(env, info, argv);
  double d;
  if (napi_get_value_double(env, argv[0], &d) != napi_ok) {
    return ThrowArgType(env, "token", "a number", argv[0]);
  }
  // flags: a number, or undefined (0).
  uint32_t flags = 0;
  if (napi_get_value_uint32(env, argv[1], &flags) != napi_ok) {
    napi_valuetype t;
    napi_typeof(env, argv[1], &t);
    if (t != napi_undefined) return ThrowArgType(env, "flags", "a number", argv[1]);
    flags = 0;
  }
  // undefined when it ended (nothing built per span), else the status.
  return EndResult(env, hotspan::fast::async_end(*b.tracer, b.async_caller, TokenOf(d), now,
                                                 static_cast<uint16_t>(flags)));
}

napi_value AsyncView(napi_env env, napi_callback_info info) {
  TracerBinding& b = ReadArgs<0>(env, info, nullptr);
  napi_value view = ExternalView(env, b.async_args.in, napi_float64_array);
  napi_valuetype t = napi_undefined;
  if (view != nullptr) napi_typeof(env, view, &t);
  // The facade now writes the tags of asyncBegin() and asyncEnd() (span_calls.h).
  if (t == napi_object && !b.async_lent) {
    b.async_lent = true;
    (*b.async_args.in)[AsyncArgs::kLocal] = 0;  // the view form's tag: a plain answer
  }
  return view;
}

napi_value AsyncBeginOf(napi_env, TracerBinding& b) {
  auto& in = *b.async_args.in;
  uint32_t track, name;
  // Not a track and name id: refused, as an unknown one is (the facade's
  // error names both).
  uint64_t token = 0;
  if (ExactU32(in[AsyncArgs::kTrack], &track) && ExactU32(in[AsyncArgs::kName], &name)) {
    token = hotspan::fast::async_begin(*b.tracer, b.async_caller, track, name, hotspan::clock::now_ticks());
  }
  // The local id through the view: no number value is made for the answer.
  in[AsyncArgs::kLocal] = static_cast<uint32_t>(token);
  return nullptr;
}

napi_value AsyncEndOf(napi_env env, TracerBinding& b) {
  const int64_t now = hotspan::clock::now_ticks();
  const auto& in = *b.async_args.in;
  uint32_t flags;
  if (!ExactU32(in[AsyncArgs::kFlags], &flags)) return StatusValue(env, hotspan::Status::kInvalid);
  return EndResult(env, hotspan::fast::async_end(*b.tracer, b.async_caller, TokenOf(in[AsyncArgs::kToken]), now,
                                                 static_cast<uint16_t>(flags)));
}

}  // namespace hotspan_addon::hot
