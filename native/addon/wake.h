// The wake-up: when native threads leave more than wake_high_water records
// pending, the core calls Wake::Fire from that producer thread; it posts (never
// blocking) to an unref'd threadsafe function whose call_js flushes the tracer
// on the JS thread of the env that created it. The core coalesces the calls.
#pragma once

#include <node_api.h>

#include <memory>
#include <mutex>

#include "record/tracer.h"

namespace hotspan_addon {

class Wake : public std::enable_shared_from_this<Wake> {
 public:
  // Creates the threadsafe function in `env` (unref'd) and hooks it up as
  // the tracer's wake callback. nullptr on failure (the tracer then drains
  // only on flush, the piggy-back drain and the GC hook).
  static std::shared_ptr<Wake> Install(napi_env env, const std::shared_ptr<hotspan::Tracer>& tracer);
  // Unhooks it from the tracer and releases the function; idempotent, never
  // throws.
  void Uninstall();

  // Any thread, any time: a no-op once released or torn down by Node.
  void Fire();

  Wake(const Wake&) = delete;
  Wake& operator=(const Wake&) = delete;

 private:
  explicit Wake(std::weak_ptr<hotspan::Tracer> tracer) : tracer_(std::move(tracer)) {}
  static void CallJs(napi_env env, napi_value js_cb, void* context, void* data);
  static void Finalize(napi_env env, void* finalize_data, void* hint);

  // Guards tsfn_ against a Fire racing Uninstall or Node's teardown of the
  // function: once tsfn_ is null nothing touches the function again.
  std::mutex mu_;
  napi_threadsafe_function tsfn_ = nullptr;
  // Weak: the tracer owns the wake callback, which owns this.
  const std::weak_ptr<hotspan::Tracer> tracer_;
};

}  // namespace hotspan_addon
