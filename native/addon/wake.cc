#include "wake.h"

namespace hotspan_addon {

std::shared_ptr<Wake> Wake::Install(napi_env env, const std::shared_ptr<hotspan::Tracer>& tracer) {
  std::shared_ptr<Wake> wake(new Wake(tracer));
  // The function's context keeps the Wake alive until Node finalizes the
  // function, whichever of Uninstall / env teardown comes first.
  auto* holder = new std::shared_ptr<Wake>(wake);
  napi_value name;
  if (napi_create_string_utf8(env, "hotspan.wake", NAPI_AUTO_LENGTH, &name) != napi_ok) {
    delete holder;
    return nullptr;
  }
  napi_threadsafe_function tsfn = nullptr;
  if (napi_create_threadsafe_function(env, nullptr, nullptr, name, 0, 1, holder, &Wake::Finalize,
                                      holder, &Wake::CallJs, &tsfn) != napi_ok) {
    delete holder;
    return nullptr;
  }
  // Never keep the process alive for a wake-up.
  napi_unref_threadsafe_function(env, tsfn);
  {
    std::lock_guard<std::mutex> lock(wake->mu_);
    wake->tsfn_ = tsfn;
  }
  tracer->set_wake([wake] { wake->Fire(); });
  return wake;
}

void Wake::Fire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (tsfn_ != nullptr) napi_call_threadsafe_function(tsfn_, nullptr, napi_tsfn_nonblocking);
}

void Wake::Uninstall() {
  // Unhook first; a producer that already copied the callback still calls
  // Fire, which is a no-op once the function is released.
  if (std::shared_ptr<hotspan::Tracer> tracer = tracer_.lock()) {
    try {
      tracer->set_wake(nullptr);
    } catch (...) {
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (tsfn_ == nullptr) return;
  napi_release_threadsafe_function(tsfn_, napi_tsfn_release);
  tsfn_ = nullptr;
}

void Wake::CallJs(napi_env env, napi_value, void* context, void*) {
  // env is null while Node tears the function down: nothing to run on.
  if (env == nullptr) return;
  auto* holder = static_cast<std::shared_ptr<Wake>*>(context);
  try {
    if (std::shared_ptr<hotspan::Tracer> tracer = (*holder)->tracer_.lock()) tracer->flush();
  } catch (...) {
    // Nothing may unwind into Node's C callback; a failed drain is retried by
    // the next flush.
  }
}

void Wake::Finalize(napi_env, void* finalize_data, void*) {
  auto* holder = static_cast<std::shared_ptr<Wake>*>(finalize_data);
  {
    std::lock_guard<std::mutex> lock((*holder)->mu_);
    (*holder)->tsfn_ = nullptr;
  }
  delete holder;
}

}  // namespace hotspan_addon
