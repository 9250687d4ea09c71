#include "hot_path.h"

#include <cmath>
#include <string>
#include <utility>

#include "arg_check.h"
#include "clock.h"
#include "thread_state.h"  // the core's inline fast::begin/end
#include "tracer_binding.h"

namespace hotspan_addon::hot {

// The clock is read last in begin* and first in end*, so argument handling
// stays outside the span. Times are raw ticks (the tracer is TimeUnit::kTicks).

namespace {

// begin's one argument, a name id, and the callback's thread state; nullptr
// (with a TypeError pending) when the argument is not a number.
inline hotspan::ThreadState* NameArg(napi_env env, napi_callback_info info, uint32_t* name) {
  size_t argc = 1;
  napi_value argv[1];
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  // A missing argument reads as undefined, which fails here too.
  if (napi_get_value_uint32(env, argv[0], name) != napi_ok) {
    ThrowArgType(env, "nameId", "a number", argv[0]);
    return nullptr;
  }
  return static_cast<TracerBinding*>(data)->thread;
}

}  // namespace

napi_value Begin(napi_env env, napi_callback_info info) {
  uint32_t name;
  hotspan::ThreadState* state = NameArg(env, info, &name);
  if (state == nullptr) return nullptr;
  // undefined when the span opened; otherwise the status (closed, unknown
  // name, or a stack already 65,535 deep), for the facade to throw.
  return EndResult(env, hotspan::fast::begin(*state, name, hotspan::clock::now_ticks()));
}

napi_value End(napi_env env, napi_callback_info info) {
  const int64_t now = hotspan::clock::now_ticks();
  size_t argc = 0;
  void* data;
  napi_get_cb_info(env, info, &argc, nullptr, nullptr, &data);
  return EndResult(env, hotspan::fast::end(*static_cast<TracerBinding*>(data)->thread, now));
}

napi_value BeginAttrs(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  uint32_t name;
  if (napi_get_value_uint32(env, argv[0], &name) != napi_ok) {
    return ThrowArgType(env, "nameId", "a number", argv[0]);
  }
  size_t len;
  if (napi_get_value_string_utf8(env, argv[1], nullptr, 0, &len) != napi_ok) {
    return ThrowArgType(env, "attrsJson", "a string", argv[1]);
  }
  std::string attrs(len, '\0');
  napi_get_value_string_utf8(env, argv[1], &attrs[0], len + 1, &len);
  const int64_t now = hotspan::clock::now_ticks();
  return StatusValue(env, hotspan::begin_with_attrs(*static_cast<TracerBinding*>(data)->thread,
                                                    name, now, std::move(attrs)));
}

napi_value EndFlags(napi_env env, napi_callback_info info) {
  const int64_t now = hotspan::clock::now_ticks();
  size_t argc = 1;
  napi_value argv[1];
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  uint32_t flags;
  if (napi_get_value_uint32(env, argv[0], &flags) != napi_ok) {
    return ThrowArgType(env, "flags", "a number", argv[0]);
  }
  return EndResult(env, hotspan::fast::end(*static_cast<TracerBinding*>(data)->thread, now,
                                             static_cast<uint16_t>(flags)));
}

napi_value EndAt(napi_env env, napi_callback_info info) {
  const int64_t now = hotspan::clock::now_ticks();
  size_t argc = 2;
  napi_value argv[2];
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  uint32_t depth, flags;
  if (napi_get_value_uint32(env, argv[0], &depth) != napi_ok) {
    return ThrowArgType(env, "depth", "a number", argv[0]);
  }
  if (napi_get_value_uint32(env, argv[1], &flags) != napi_ok) {
    return ThrowArgType(env, "flags", "a number", argv[1]);
  }
  hotspan::ThreadState& state = *static_cast<TracerBinding*>(data)->thread;
  // Another span is innermost: change nothing (a closed state answers kClosed below).
  if (state.depth != depth && state.status.load(std::memory_order_relaxed) == hotspan::ThreadState::kLive) {
    return StatusValue(env, hotspan::Status::kNoOpenSpan);
  }
  return EndResult(env, hotspan::fast::end(state, now, static_cast<uint16_t>(flags)));
}

bool TrackAndName(napi_env env, napi_value* argv, uint32_t* track, uint32_t* name) {
  if (napi_get_value_uint32(env, argv[0], track) != napi_ok) {
    ThrowArgType(env, "track", "a number", argv[0]);
    return false;
  }
  if (napi_get_value_uint32(env, argv[1], name) != napi_ok) {
    ThrowArgType(env, "nameId", "a number", argv[1]);
    return false;
  }
  return true;
}

// Async spans: raw Node-API as well, since traceAsync() makes one of each
// per span. Tokens are track id << 32 | local id: exact in a double while
// the track id is below 2^21; anything else is no token.
napi_value AsyncBegin(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  uint32_t track, name;
  if (!TrackAndName(env, argv, &track, &name)) return nullptr;
  std::string attrs;
  napi_valuetype t;
  napi_typeof(env, argv[2], &t);
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
  return TokenValue(env, static_cast<TracerBinding*>(data)->tracer->async_begin(
                             track, name, hotspan::clock::now_ticks(), std::move(attrs)));
}

napi_value AsyncEnd(napi_env env, napi_callback_info info) {
  const int64_t now = hotspan::clock::now_ticks();
  size_t argc = 2;
  napi_value argv[2];
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  double d;
  if (napi_get_value_double(env, argv[0], &d) != napi_ok) {
    return ThrowArgType(env, "token", "a number", argv[0]);
  }
  uint32_t flags = 0;
  napi_valuetype t;
  napi_typeof(env, argv[1], &t);
  if (t != napi_undefined && napi_get_value_uint32(env, argv[1], &flags) != napi_ok) {
    return ThrowArgType(env, "flags", "a number", argv[1]);
  }
  const bool token_ok = d > 0 && d <= 9007199254740991.0 && std::floor(d) == d;
  const uint64_t token = token_ok ? static_cast<uint64_t>(d) : 0;
  return StatusValue(env, static_cast<TracerBinding*>(data)->tracer->async_end(
                              token, now, static_cast<uint16_t>(flags)));
}

}  // namespace hotspan_addon::hot
