// ESM entry of hotspan/otel: the CommonJS module (one instance for require
// and import, so both share one tracer provider state).
import otel from '../dist/otel/index.js';

export const { TracerProvider, SpanExporterAdapter, AsyncLocalStorageContextManager, TraceContextPropagator, OTEL_TRACK } = otel;
export default otel;
