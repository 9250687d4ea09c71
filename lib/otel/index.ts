// hotspan/otel: the OpenTelemetry API on hotspan (TracerProvider) and
// hotspan's spans out through any OpenTelemetry SpanExporter
// (SpanExporterAdapter). Needs @opentelemetry/api (an optional peer
// dependency of hotspan) and the native or js backend.

export { TracerProvider, OTEL_TRACK } from './provider';
export { SpanExporterAdapter } from './exporter-adapter';
export type { SpanExporterAdapterOptions, SpanExporterLike, ReadableSpanLike, ResourceLike } from './exporter-adapter';
export { AsyncLocalStorageContextManager } from './context-manager';
export { TraceContextPropagator } from './propagator';
