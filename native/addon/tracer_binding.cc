#include "tracer_binding.h"

#include "record/clock.h"
#include "call_slots.h"
#include "span_calls.h"

namespace hotspan_addon {

TracerBinding::TracerBinding(std::shared_ptr<hotspan::Tracer> tracer_in,
                             std::shared_ptr<hotspan::ThreadState> state_in,
                             std::shared_ptr<EnvData> env_data_in, std::shared_ptr<Wake> wake_in)
    : tracer(std::move(tracer_in)),
      state(std::move(state_in)),
      thread(state.get()),
      env_data(std::move(env_data_in)),
      wake(std::move(wake_in)),
      call_slot(call_slots::kNone) {
  async_caller.state = thread;
  // Until the facade takes the views, every per-span call is an argument form.
  thread->begin_name = span_calls::kNameArgs;
  (*async_args.in)[AsyncArgs::kLocal] = span_calls::kLocalArgs;
  (*async_args.in)[AsyncArgs::kToken] = span_calls::kTokenArgs;
  env_data->Add(this);
}

TracerBinding::~TracerBinding() {
  call_slots::Release(call_slot);
  env_data->Remove(this);
}

void TracerBinding::DropWake() {
  if (!wake) return;
  wake->Uninstall();
  wake.reset();
}

void TracerBinding::Detach(bool flush) {
  if (!detached) {
    detached = true;
    try {
      tracer->detach_thread(*thread, tracer->now());
      if (flush) tracer->flush();
    } catch (...) {
      // Runs from env cleanup and finalizers: nothing may escape.
    }
  }
  DropWake();
}

void TracerBinding::Close() {
  tracer->flush();
  tracer->close();
  DropWake();
}

bool TracerBinding::AddHandle(napi_env env, napi_value fn) {
  if (napi_add_finalizer(env, fn, this, &TracerBinding::ReleaseHandle, nullptr, nullptr) !=
      napi_ok) {
    return false;
  }
  ++handles_;
  return true;
}

bool TracerBinding::WrapHandle(napi_env env, napi_value obj) {
  if (napi_wrap(env, obj, this, &TracerBinding::ReleaseHandle, nullptr, nullptr) != napi_ok) {
    return false;
  }
  ++handles_;
  return true;
}

void TracerBinding::ReleaseHandle(napi_env, void* data, void*) {
  auto* self = static_cast<TracerBinding*>(data);
  if (--self->handles_ > 0) return;
  // No JS can reach this binding any more: its open spans can never end.
  self->Detach(/*flush=*/false);
  delete self;
}

}  // namespace hotspan_addon
