// A typed array over memory the addon owns (a std::array held by a
// shared_ptr): the ArrayBuffer holds its own reference, so the memory lives
// as long as the later of the binding and the buffer. undefined where the
// runtime refuses external buffers (the caller then passes arguments).
#pragma once

#include <node_api.h>

#include <memory>

namespace hotspan_addon {

template <typename Array>
napi_value ExternalView(napi_env env, const std::shared_ptr<Array>& mem, napi_typedarray_type type) {
  auto* hold = new std::shared_ptr<Array>(mem);
  auto release = [](napi_env, void*, void* hint) { delete static_cast<std::shared_ptr<Array>*>(hint); };
  napi_value ab, view;
  if (napi_create_external_arraybuffer(env, mem->data(), sizeof(*mem), release, hold, &ab) != napi_ok) {
    delete hold;
    napi_value pending;
    napi_get_and_clear_last_exception(env, &pending);
    napi_get_undefined(env, &view);
    return view;
  }
  if (napi_create_typedarray(env, type, mem->size(), ab, 0, &view) != napi_ok) return nullptr;
  return view;
}

}  // namespace hotspan_addon
