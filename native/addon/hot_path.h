// begin / end / beginAttrs / endFlags: the per-span calls. Raw Node-API
// callbacks whose data pointer is the TracerBinding: one napi_get_cb_info,
// one napi_get_value_uint32, the clock and the core call. No node-addon-api
// wrappers, no allocation (beginAttrs copies its JSON text), no exception
// objects unless an argument is bad.
#pragma once

#include <node_api.h>

namespace hotspan_addon::hot {

napi_value Begin(napi_env env, napi_callback_info info);       // (nameId) -> undefined
napi_value End(napi_env env, napi_callback_info info);         // () -> status
napi_value BeginAttrs(napi_env env, napi_callback_info info);  // (nameId, attrsJson) -> status
napi_value EndFlags(napi_env env, napi_callback_info info);    // (flags) -> status

}  // namespace hotspan_addon::hot
