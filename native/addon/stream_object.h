// tracer.stream(path, rotateBytes, keep, onError): a TraceStream
// (native/core/write/trace_stream.h) as a JS object with close() and status().
// onError is called (no arguments) on the JS thread when the stream's thread
// hits a write error; status().error then says what failed.
#pragma once

#include <napi.h>

#include "tracer_binding.h"

namespace hotspan_addon {

Napi::Value StartStream(const Napi::CallbackInfo& info, TracerBinding& self);

}  // namespace hotspan_addon
