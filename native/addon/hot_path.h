// The per-span forms' work behind span_calls.h's entry points (which decode
// the forms): raw Node-API callbacks whose data pointer is the TracerBinding,
// one napi_get_cb_info, one napi_get_value_uint32, the clock and the core
// call. No node-addon-api wrappers, no allocation (beginAttrs copies its JSON
// text), no exception objects unless an argument is bad.
#pragma once

#include <node_api.h>

#include <cstddef>
#include <cstdint>

#include "record/tracer.h"

namespace hotspan_addon {
struct TracerBinding;
}

namespace hotspan_addon::hot {

// Every per-span callback's preamble: up to N arguments into argv (missing
// ones read as undefined) and the binding, the callback's data pointer.
template <size_t N>
inline TracerBinding& ReadArgs(napi_env env, napi_callback_info info, napi_value* argv) {
  size_t argc = N;
  void* data;
  napi_get_cb_info(env, info, &argc, N == 0 ? nullptr : argv, nullptr, &data);
  return *static_cast<TracerBinding*>(data);
}

// A uint32 argument, or false with a TypeError naming `arg` pending.
// Inline: the hot calls read one to three of them.
bool U32ArgFailed(napi_env env, napi_value v, const char* arg);
inline bool U32Arg(napi_env env, napi_value v, const char* arg, uint32_t* out) {
  // A missing argument reads as undefined, which fails here too.
  return napi_get_value_uint32(env, v, out) == napi_ok || U32ArgFailed(env, v, arg);
}

// A status as a number: small integers are V8 Smis, no heap allocation.
inline napi_value StatusValue(napi_env env, hotspan::Status status) {
  napi_value result;
  napi_create_uint32(env, static_cast<uint32_t>(status), &result);
  return result;
}

// begin's and end's result: undefined on success (nothing is built on the
// common path), else the status as a number.
inline napi_value EndResult(napi_env env, hotspan::Status status) {
  return status == hotspan::Status::kOk ? nullptr : StatusValue(env, status);
}

napi_value Begin(napi_env env, napi_callback_info info);       // (nameId) -> status
napi_value BeginAttrs(napi_env env, napi_callback_info info);  // (nameId, attrsJson) -> status

// The async begins' (track, nameId) in argv[0..1]; false with a TypeError pending.
bool TrackAndName(napi_env env, napi_value* argv, uint32_t* track, uint32_t* name);
// An async begin's answer for token `token` (0: refused): its local id, the
// lower half. Below 2^31 that is a V8 Smi, so no heap number is made per span
// (a double token would be one); the facade adds the upper half, which is
// the track id it passed (lib/backends/native-backend.ts).
inline napi_value TokenValue(napi_env env, uint64_t token) {
  napi_value out;
  napi_create_uint32(env, static_cast<uint32_t>(token), &out);
  return out;
}

// A token as the facade passes it (a double); 0 (no token) for anything but
// an integer in (0, 2^53).
inline uint64_t TokenOf(double d) {
  if (!(d > 0 && d <= 9007199254740991.0)) return 0;
  // In range, the conversion truncates: a fraction does not survive the round trip.
  const auto u = static_cast<uint64_t>(d);
  return static_cast<double>(u) == d ? u : 0;
}

napi_value AsyncBegin(napi_env env, napi_callback_info info);  // (track, nameId, attrsJson?) -> local id | 0
napi_value AsyncEnd(napi_env env, napi_callback_info info);    // (token, flags?) -> undefined | status
// The same calls with their numbers in the async view (async_args.h): no
// Node-API argument is read. asyncView() -> the Float64Array, or undefined
// where external buffers are refused (then the calls above are used).
// The begin answers undefined and leaves the local id (0: refused) in the
// view's kLocal, so no number value is made per span. asyncBegin() and
// asyncEnd() run these when their view tag says so (span_calls.h).
napi_value AsyncView(napi_env env, napi_callback_info info);       // () -> Float64Array | undefined
napi_value AsyncBeginOf(napi_env env, TracerBinding& b);
napi_value AsyncEndOf(napi_env env, TracerBinding& b);

}  // namespace hotspan_addon::hot
