// Everything the addon keeps per Node env (main thread or worker), in one
// struct set as the env's instance data. The env cleanup hook detaches this
// env's thread from every tracer it touched: that is how a worker that exits
// or is terminated mid-span leaves its spans ended (flagged abandoned) and
// committed instead of lost.
#pragma once

#include <node_api.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace hotspan_addon {

struct TracerBinding;

struct EnvData {
  napi_env env = nullptr;
  // Live bindings of this env (a binding removes itself when deleted).
  std::vector<TracerBinding*> bindings;
  // The cleanup hook ran: the env is going away, no JS runs any more.
  bool cleaned_up = false;
  // The class whose prototype holds the tracer objects' cold methods, made
  // on first use (tracer_object.cc); freed with the env.
  napi_ref tracer_class = nullptr;

  // Sets the instance data and registers the cleanup hook; once per env.
  static bool Install(napi_env env);
  // This env's data (never null after Install).
  static std::shared_ptr<EnvData> Get(napi_env env);

  // The binding of tracer `tracer_id` in this env, or nullptr.
  TracerBinding* FindBinding(uint64_t tracer_id) const;
  void Add(TracerBinding* binding);
  void Remove(TracerBinding* binding);

 private:
  static void Cleanup(void* arg);
  static void FinalizeInstance(napi_env env, void* data, void* hint);
};

}  // namespace hotspan_addon
