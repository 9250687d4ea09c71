// Builds the NativeTracer object of lib/binding/native-binding.ts over a binding:
// a type-tagged object wrapping the binding. The hot-path methods are its own
// functions, created with the binding as their data pointer (no `this`
// lookup, no unwrap); the cold ones are shared by every tracer of the env, on
// one prototype, and find the binding through `this` (BindingOf). So a
// tracer costs 13 functions, not 55: what 60k tracers made and closed at
// once hold until their finalizers run (Node-API runs them after the event
// loop turns).
#pragma once

#include <napi.h>

#include "tracer_binding.h"

namespace hotspan_addon {

// Tag of every NativeTracer object, for napi_check_object_type_tag.
extern const napi_type_tag kTracerObjectTag;

// Throws (Napi::Error) on failure. The binding is owned by the object's and
// the functions' finalizers once at least one of them was registered.
Napi::Object NewTracerObject(Napi::Env env, TracerBinding* binding);

// The binding of NativeTracer `self`; throws a TypeError when `self` is not
// one (a cold method called on another object).
TracerBinding& BindingOf(Napi::Env env, Napi::Value self);

}  // namespace hotspan_addon
