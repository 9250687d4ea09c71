#include "span_calls.h"

#include <napi.h>

#include "async_args.h"
#include "attr_values.h"
#include "hot_path.h"
#include "record/clock.h"
#include "record/thread_state.h"  // the core's inline fast::begin/end
#include "trace_context.h"
#include "tracer_binding.h"

namespace hotspan_addon::span_calls {

namespace {

// The context forms are node-addon-api functions: their exceptions become JS ones.
template <Napi::Function::Callback cb>
napi_value Wrapped(napi_env env, napi_callback_info info) {
  try {
    return cb(Napi::CallbackInfo(env, info));
  } catch (const Napi::Error& e) {
    e.ThrowAsJavaScriptException();
    return nullptr;
  }
}

// argc and up to N arguments (missing ones read as undefined).
template <size_t N>
size_t ArgCount(napi_env env, napi_callback_info info, napi_value* argv) {
  size_t argc = N;
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  return argc;
}

bool IsNumber(napi_env env, napi_value v) {
  napi_valuetype t;
  return napi_typeof(env, v, &t) == napi_ok && t == napi_number;
}

// The argument forms of begin. The form's own function reads its arguments
// again with its own napi_get_cb_info: these are the rare forms (no state
// view, JSON attributes, values outside the slot view, a given context).
napi_value BeginArgs(napi_env env, napi_callback_info info, TracerBinding& b) {
  if (b.state_lent) b.thread->begin_name = 0;  // end() after this is a plain one
  napi_value argv[3];
  const size_t argc = ArgCount<3>(env, info, argv);
  if (argc <= 1) return hot::Begin(env, info);                  // (nameId)
  if (IsNumber(env, argv[1])) return slots::BeginSlots(env, info);  // (nameId, code, v0 .. v3)
  if (argc == 2) return hot::BeginAttrs(env, info);             // (nameId, attrsJson)
  return Wrapped<trace_context::BeginContext>(env, info);       // (nameId, attrsJson, ids, flags, tracestate)
}

napi_value AsyncBeginArgs(napi_env env, napi_callback_info info, TracerBinding& b) {
  napi_value argv[3];
  const size_t argc = ArgCount<3>(env, info, argv);
  if (argc == 0) return hot::AsyncBeginOf(env, b);  // () with the tag written: the view form
  if (argc >= 3 && IsNumber(env, argv[2])) return slots::AsyncBeginSlots(env, info);  // (track, nameId, code, v0 .. v3)
  if (argc >= 4) return Wrapped<trace_context::AsyncBeginContext>(env, info);  // (track, nameId, attrsJson, ids, flags, tracestate)
  return hot::AsyncBegin(env, info);  // (track, nameId[, attrsJson])
}

}  // namespace

napi_value BeginTagged(napi_env env, napi_callback_info info, TracerBinding& b, uint32_t tag) {
  if (tag == kNameView) return slots::BeginViewOf(env, b);
  return BeginArgs(env, info, b);
}

napi_value EndArgs(napi_env env, napi_callback_info info, TracerBinding& b, int64_t now) {
  hotspan::ThreadState& state = *b.thread;
  if (b.state_lent) state.begin_name = 0;
  napi_value argv[2];
  const size_t argc = ArgCount<2>(env, info, argv);
  uint32_t depth = 0, flags = 0;
  if (argc == 1 && !hot::U32Arg(env, argv[0], "flags", &flags)) return nullptr;  // (flags)
  if (argc >= 2) {                                                               // (depth, flags)
    if (!hot::U32Arg(env, argv[0], "depth", &depth) || !hot::U32Arg(env, argv[1], "flags", &flags)) return nullptr;
    // trace()'s end when the facade saw another depth than its span's: ends
    // the innermost span only while the stack is exactly `depth` deep.
    // Another span is innermost: change nothing (a closed state answers kClosed below).
    if (state.depth != depth && state.status.load(std::memory_order_relaxed) == hotspan::ThreadState::kLive) {
      return hot::StatusValue(env, hotspan::Status::kNoOpenSpan);
    }
  }
  return hot::EndResult(env, hotspan::fast::end(state, now, static_cast<uint16_t>(flags)));
}

napi_value AsyncBeginOf(napi_env env, napi_callback_info info, TracerBinding& b) {
  auto& in = *b.async_args.in;
  const double tag = in[AsyncArgs::kLocal];
  if (__builtin_expect(tag >= -1, 1)) return hot::AsyncBeginOf(env, b);  // writes its answer to kLocal
  if (tag == kLocalValues) {
    in[AsyncArgs::kLocal] = 0;  // the answer replaces it; a throw leaves 0
    return slots::AsyncBeginValuesOf(env, b);
  }
  if (b.async_lent) in[AsyncArgs::kLocal] = 0;
  return AsyncBeginArgs(env, info, b);
}

napi_value AsyncEndOf(napi_env env, napi_callback_info info, TracerBinding& b) {
  if (__builtin_expect((*b.async_args.in)[AsyncArgs::kToken] != kTokenArgs, 1)) return hot::AsyncEndOf(env, b);
  napi_value argv[3];
  const size_t argc = ArgCount<3>(env, info, argv);
  if (argc >= 3) return Wrapped<trace_context::AsyncFinish>(env, info);  // (token, flags, startMs, endMs, nameId[, attrsJson])
  // () with the tag as the view's token: no token, as before.
  if (argc == 0) return hot::AsyncEndOf(env, b);
  return hot::AsyncEnd(env, info);  // (token[, flags])
}

napi_value Begin(napi_env env, napi_callback_info info) {
  TracerBinding& b = hot::ReadArgs<0>(env, info, nullptr);
  const uint32_t name = b.thread->begin_name;
  if (name >= kNameArgs) return BeginTagged(env, info, b, name);
  return hot::EndResult(env, hotspan::fast::begin(*b.thread, name, hotspan::clock::now_ticks()));
}

napi_value End(napi_env env, napi_callback_info info) {
  const int64_t now = hotspan::clock::now_ticks();
  TracerBinding& b = hot::ReadArgs<0>(env, info, nullptr);
  if (b.thread->begin_name == kNameArgs) return EndArgs(env, info, b, now);
  return hot::EndResult(env, hotspan::fast::end(*b.thread, now));
}

napi_value AsyncBegin(napi_env env, napi_callback_info info) {
  return AsyncBeginOf(env, info, hot::ReadArgs<0>(env, info, nullptr));
}

napi_value AsyncEnd(napi_env env, napi_callback_info info) {
  return AsyncEndOf(env, info, hot::ReadArgs<0>(env, info, nullptr));
}

}  // namespace hotspan_addon::span_calls
