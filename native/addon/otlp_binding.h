// The OTLP exporter's view of a tracer, for the exporter's worker thread
// (lib/otlp/otlp-worker.ts): `otlpSource(token, config)` wraps a core OtlpSource
// over the tracer shared under `token` (without attaching the worker's
// thread to it: the exporter records nothing), `otlpNext(source, maxSpans,
// final)` encodes the next request. A type-tagged JS object holds the source.
#pragma once

#include <napi.h>

namespace hotspan_addon {

void InitOtlp(Napi::Env env, Napi::Object exports);

}  // namespace hotspan_addon
