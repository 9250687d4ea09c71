// Builds the NativeTracer object of lib/binding/native-binding.ts over a binding:
// a plain object, type-tagged, whose methods are functions created with the
// binding as their data pointer (no `this` lookup, no unwrap).
#pragma once

#include <napi.h>

#include "tracer_binding.h"

namespace hotspan_addon {

// Tag of every NativeTracer object, for napi_check_object_type_tag.
extern const napi_type_tag kTracerObjectTag;

// Throws (Napi::Error) on failure. The binding is owned by the functions'
// finalizers once at least one function was created.
Napi::Object NewTracerObject(Napi::Env env, TracerBinding* binding);

}  // namespace hotspan_addon
