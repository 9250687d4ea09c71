#include "env_data.h"

#include <algorithm>

#include "tracer_binding.h"

namespace hotspan_addon {

bool EnvData::Install(napi_env env) {
  if (Get(env) != nullptr) return true;
  auto data = std::make_shared<EnvData>();
  data->env = env;
  // Bindings hold a shared_ptr too, so the struct outlives whichever of the
  // instance-data finalizer and the bindings' finalizers runs last.
  auto* holder = new std::shared_ptr<EnvData>(data);
  if (napi_set_instance_data(env, holder, &EnvData::FinalizeInstance, nullptr) != napi_ok) {
    delete holder;
    return false;
  }
  // Registered before any threadsafe function of this env, so it runs after
  // Node's own teardown of those functions (hooks run in reverse order).
  return napi_add_env_cleanup_hook(env, &EnvData::Cleanup, data.get()) == napi_ok;
}

std::shared_ptr<EnvData> EnvData::Get(napi_env env) {
  void* raw = nullptr;
  if (napi_get_instance_data(env, &raw) != napi_ok || raw == nullptr) return nullptr;
  return *static_cast<std::shared_ptr<EnvData>*>(raw);
}

TracerBinding* EnvData::FindBinding(uint64_t tracer_id) const {
  for (TracerBinding* b : bindings) {
    if (!b->detached && b->tracer->id() == tracer_id) return b;
  }
  return nullptr;
}

void EnvData::Add(TracerBinding* binding) { bindings.push_back(binding); }

void EnvData::Remove(TracerBinding* binding) {
  bindings.erase(std::remove(bindings.begin(), bindings.end(), binding), bindings.end());
}

void EnvData::Cleanup(void* arg) {
  auto* data = static_cast<EnvData*>(arg);
  data->cleaned_up = true;
  // Copy: detaching never deletes a binding, but stay safe against that.
  std::vector<TracerBinding*> live = data->bindings;
  for (TracerBinding* b : live) b->Detach(/*flush=*/true);
}

void EnvData::FinalizeInstance(napi_env, void* data, void*) {
  delete static_cast<std::shared_ptr<EnvData>*>(data);
}

}  // namespace hotspan_addon
