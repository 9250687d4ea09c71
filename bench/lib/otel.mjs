// The OpenTelemetry SDK as every bench case sets it up: BasicTracerProvider +
// BatchSpanProcessor (default limits) + an exporter that counts, forgets
// (bounded memory) and completes at once. The stock InMemorySpanExporter
// keeps every span and completes each export on a setTimeout(0), which caps
// the processor at one 512-span batch per timer tick; this one makes the
// figure the SDK's own cost, not the exporter's.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function makeOtel() {
  const api = require('@opentelemetry/api');
  const { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
  let exported = 0;
  class CountingExporter extends InMemorySpanExporter {
    export(spans, resultCallback) {
      exported += spans.length;
      resultCallback({ code: 0 }); // ExportResultCode.SUCCESS
    }
  }
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new CountingExporter())] });
  return { api, provider, tracer: provider.getTracer('hotspan-bench'), exported: () => exported };
}
