// The module: NativeAddon of lib/binding/native-binding.ts (abiVersion, create, join,
// nowNs). Context-aware: every env (main thread, each worker) gets its own
// EnvData and cleanup hook.
#include <napi.h>

#include <memory>
#include <string>

#include "arg_check.h"
#include "record/clock.h"
#include "record/sampler.h"
#include "env_data.h"
#include "hotspan.h"
#include "otlp_binding.h"
#include "shared_tracers.h"
#include "tracer_object.h"

namespace hotspan_addon {

namespace {

std::shared_ptr<EnvData> RequireEnvData(Napi::Env env) {
  std::shared_ptr<EnvData> data = EnvData::Get(env);
  if (!data) throw Napi::Error::New(env, "hotspan: the addon was not initialized in this env");
  return data;
}

// options.threadName: a string, or `fallback` when absent.
std::string ThreadNameOption(Napi::Env env, const Napi::Object& options, const char* fallback) {
  Napi::Value v = options.Get("threadName");
  if (v.IsUndefined()) return fallback;
  if (!v.IsString()) ThrowArgTypeCxx(env, "options.threadName", "a string", v);
  return v.As<Napi::String>().Utf8Value();
}

// Wraps `binding` in a NativeTracer. A fresh binding that no function took
// ownership of (failure before the first one) is deleted here.
Napi::Object Wrap(Napi::Env env, TracerBinding* binding) {
  try {
    return NewTracerObject(env, binding);
  } catch (...) {
    if (binding->handle_count() == 0) {
      binding->Detach(/*flush=*/false);
      delete binding;
    }
    throw;
  }
}

// The longest processName create() takes, in UTF-8 bytes (the facade's
// bound, lib/tracer/options.ts, is 256 UTF-16 units: at most 768 bytes).
constexpr size_t kMaxProcessNameBytes = 1024;

// create({ originNs: bigint, threadName?: string, wakeHighWater?: number,
//          memoryLimit?: number (bytes, clamped by the core), onFull?: 'overwrite' | 'drop',
//          processName?: string (the documents' process name) })
Napi::Value Create(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object options = ARG_OBJECT(0, "options");

  hotspan::TracerOptions opts;
  // Record times are TSC ticks (clock::now_ticks in hot_path.cc and
  // tracer_object.cc), converted to ns when read.
  opts.time_unit = hotspan::TimeUnit::kTicks;
  Napi::Value origin = options.Get("originNs");
  if (!origin.IsBigInt()) ThrowArgTypeCxx(env, "options.originNs", "a bigint", origin);
  bool lossless = false;
  opts.origin_ns = origin.As<Napi::BigInt>().Int64Value(&lossless);
  if (!lossless) throw Napi::RangeError::New(env, "hotspan: options.originNs is out of range");

  Napi::Value high = options.Get("wakeHighWater");
  if (!high.IsUndefined()) {
    if (!high.IsNumber()) ThrowArgTypeCxx(env, "options.wakeHighWater", "a number", high);
    double d = high.As<Napi::Number>().DoubleValue();
    if (!(d >= 1) || d > 9007199254740991.0) {
      throw Napi::RangeError::New(env, "hotspan: options.wakeHighWater must be a positive integer");
    }
    opts.wake_high_water = static_cast<size_t>(d);
  }
  Napi::Value limit = options.Get("memoryLimit");
  if (!limit.IsUndefined()) {
    if (!limit.IsNumber()) ThrowArgTypeCxx(env, "options.memoryLimit", "a number", limit);
    const double d = limit.As<Napi::Number>().DoubleValue();
    if (!(d >= 0) || d > 9007199254740991.0) {
      throw Napi::RangeError::New(env, "hotspan: options.memoryLimit must be a byte count");
    }
    opts.memory_limit = static_cast<size_t>(d);
  }
  Napi::Value on_full = options.Get("onFull");
  if (!on_full.IsUndefined()) {
    const std::string policy = on_full.IsString() ? on_full.As<Napi::String>().Utf8Value() : "";
    if (policy == "drop") {
      opts.on_full = hotspan::FullPolicy::kDrop;
    } else if (policy != "overwrite") {
      ThrowArgTypeCxx(env, "options.onFull", "'overwrite' or 'drop'", on_full);
    }
  }
  Napi::Value sampler = options.Get("sampler");
  if (!sampler.IsUndefined()) {
    if (!sampler.IsBigInt()) ThrowArgTypeCxx(env, "options.sampler", "a bigint", sampler);
    bool exact = false;
    opts.sampler = sampler.As<Napi::BigInt>().Uint64Value(&exact);
    if (!exact || (opts.sampler & ~hotspan::sampler::kKnownBits) != 0) {
      throw Napi::RangeError::New(env, "hotspan: options.sampler is not a sampler word");
    }
  }
  Napi::Value keep = options.Get("keep");
  if (!keep.IsUndefined()) {
    if (!keep.IsBigInt()) ThrowArgTypeCxx(env, "options.keep", "a bigint", keep);
    bool exact = false;
    opts.keep = keep.As<Napi::BigInt>().Uint64Value(&exact);
    if (!exact) throw Napi::RangeError::New(env, "hotspan: options.keep is not a tail keep word");
  }
  Napi::Value keep_names = options.Get("keepNames");
  if (!keep_names.IsUndefined()) {
    if (!keep_names.IsArray()) ThrowArgTypeCxx(env, "options.keepNames", "an array of strings", keep_names);
    Napi::Array names = keep_names.As<Napi::Array>();
    for (uint32_t i = 0; i < names.Length(); ++i) {
      Napi::Value name = names.Get(i);
      if (!name.IsString()) ThrowArgTypeCxx(env, "options.keepNames[i]", "a string", name);
      opts.keep_names.push_back(name.As<Napi::String>().Utf8Value());
    }
  }
  Napi::Value process_name = options.Get("processName");
  if (!process_name.IsUndefined()) {
    if (!process_name.IsString()) ThrowArgTypeCxx(env, "options.processName", "a string", process_name);
    opts.process_name = process_name.As<Napi::String>().Utf8Value();
    if (opts.process_name.empty() || opts.process_name.size() > kMaxProcessNameBytes) {
      throw Napi::RangeError::New(env, "hotspan: options.processName must be 1 to " +
                                           std::to_string(kMaxProcessNameBytes) + " bytes of UTF-8");
    }
  }
  std::string thread_name = ThreadNameOption(env, options, "main");

  std::shared_ptr<EnvData> env_data = RequireEnvData(env);
  std::shared_ptr<hotspan::Tracer> tracer = hotspan::Tracer::create(opts);
  std::shared_ptr<Wake> wake = Wake::Install(env, tracer);
  auto* binding = new TracerBinding(tracer, tracer->attach_js_thread(thread_name), env_data, wake);
  return Wrap(env, binding);
}

// join(token, { threadName?: string })
Napi::Value Join(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string token = ARG_STRING(0, "token");
  Napi::Object options =
      info[1].IsUndefined() ? Napi::Object::New(env) : ARG_OBJECT(1, "options");
  std::string thread_name = ThreadNameOption(env, options, "worker");

  std::shared_ptr<hotspan::Tracer> tracer = shared_tracers::Find(token);
  if (!tracer) {
    throw Napi::Error::New(env, "hotspan: unknown tracer token '" + token +
                                    "' (never shared in this process, or the tracer is gone)");
  }
  if (tracer->closed()) {
    throw Napi::Error::New(env, "hotspan: tracer token '" + token + "' names a closed tracer");
  }
  std::shared_ptr<EnvData> env_data = RequireEnvData(env);
  // One holder timeline per (tracer, thread): joining from an env that
  // already records into this tracer reuses its binding.
  if (TracerBinding* existing = env_data->FindBinding(tracer->id())) {
    return Wrap(env, existing);
  }
  auto* binding =
      new TracerBinding(tracer, tracer->attach_js_thread(thread_name), env_data, nullptr);
  return Wrap(env, binding);
}

Napi::Value NowNs(const Napi::CallbackInfo& info) {
  return Napi::BigInt::New(info.Env(), static_cast<int64_t>(hotspan::clock::now_ns()));
}

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  if (!EnvData::Install(env)) {
    throw Napi::Error::New(env, "hotspan: could not set up per-env state");
  }
  exports.Set("abiVersion", Napi::Number::New(env, HOTSPAN_ABI_VERSION));
  // Which clock record timestamps read: benchmarks pair hotspan with a floor
  // that reads the same one.
  exports.Set("clockSource", Napi::String::New(env, hotspan::clock::tsc_enabled() ? "tsc" : "monotonic"));
  exports.Set("create", Napi::Function::New<Create>(env, "create"));
  exports.Set("join", Napi::Function::New<Join>(env, "join"));
  exports.Set("nowNs", Napi::Function::New<NowNs>(env, "nowNs"));
  InitOtlp(env, exports);
  return exports;
}

}  // namespace hotspan_addon

// NODE_API_MODULE pastes the init function's name into a symbol: no `::`.
static Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  return hotspan_addon::Init(env, exports);
}

NODE_API_MODULE(hotspan, InitModule)
