// One tracer as seen from one env: the tracer, this env thread's holder state,
// and (in the env that created the tracer) the wake-up. Its address is the
// data pointer of every method function of the NativeTracer objects built on
// it, so the hot path reaches its ThreadState with one load.
//
// Lifetime: each method function holds a handle (counted, released by a
// Node-API finalizer); the binding is deleted when the last one is collected
// or finalized at env teardown. Env cleanup detaches it before that.
#pragma once

#include <node_api.h>

#include <cstddef>
#include <memory>

#include "async_args.h"
#include "env_data.h"
#include "attr_values.h"
#include "record/tracer.h"
#include "wake.h"

namespace hotspan_addon {

struct TracerBinding {
  TracerBinding(std::shared_ptr<hotspan::Tracer> tracer,
                std::shared_ptr<hotspan::ThreadState> state, std::shared_ptr<EnvData> env_data,
                std::shared_ptr<Wake> wake);
  ~TracerBinding();
  TracerBinding(const TracerBinding&) = delete;
  TracerBinding& operator=(const TracerBinding&) = delete;

  const std::shared_ptr<hotspan::Tracer> tracer;
  const std::shared_ptr<hotspan::ThreadState> state;
  hotspan::ThreadState* const thread;  // state.get(), for the hot path
  const std::shared_ptr<EnvData> env_data;
  std::shared_ptr<Wake> wake;  // null unless this env created the tracer

  // This env's thread was detached (env cleanup or last handle collected).
  bool detached = false;
  // The call_slots slot of this binding's begin and end, if it got one.
  size_t call_slot;
  // Attribute shapes of this env's facade (attr_values.h); env thread only.
  SlotShapes shapes;
  // This env thread's async cache (its last track, its state); env thread only.
  hotspan::AsyncCaller async_caller;
  // The async calls' numbers (async_args.h); env thread only.
  AsyncArgs async_args;
  // Whether the facade was given the state view (begin_name) and the async
  // view: only then does it write the per-span entries' tags, and only then
  // may the addon put a tag back after an argument form (span_calls.h).
  bool state_lent = false;
  bool async_lent = false;

  // Ends this thread's open spans (abandoned), commits them, marks the
  // timeline exited, drops the wake-up. Idempotent; never throws.
  void Detach(bool flush);
  // JS close(): drains what is pending, closes the tracer, drops the wake-up.
  void Close();
  // Counts `fn` as a handle: the binding lives until its finalizer ran.
  bool AddHandle(napi_env env, napi_value fn);
  // Wraps `obj` around this binding (napi_unwrap finds it) and counts it as
  // a handle, as AddHandle does.
  bool WrapHandle(napi_env env, napi_value obj);
  int handle_count() const { return handles_; }

 private:
  void DropWake();
  static void ReleaseHandle(napi_env env, void* data, void* hint);
  int handles_ = 0;
};

}  // namespace hotspan_addon
