// OTLP export of hotspan/auto's spans, when the OTEL_* variables ask for it.
//
// A tracer of its own, with tracer.exportOtlp() configured by the OTEL_*
// variables, is given each automatic span as it ends (its start, name and
// attributes are final only then: the core's asyncFinish takes them late).
// It is a second tracer, not the automatic one, so the file written at exit
// (the automatic tracer's snapshot plus withAutoSpans) stays as it was. The
// narrower part: each exported span is a root. A span's parent (the request
// that opened a connection, adopted after the connection began) is known for
// the file only when it is written, and usually ends after its child.

import type { AutoSpan, SpanSink } from './auto-record';
import { FLAG_ERROR } from './flags';
import { internals } from './internal';
import type { KindName } from './otel/otel-data';
import { Tracer } from './tracer';

/** The OTLP span kind of a track's spans (stored as otelAttrs does; the rest are internal). */
const KINDS: Readonly<Record<string, KindName>> = { 'http server': 'server', 'http client': 'client', fetch: 'client' };

type Env = Record<string, string | undefined>;

function set(v: string | undefined): boolean {
  return v !== undefined && v.trim() !== '';
}

/** Export is on when an endpoint is set and OTEL_TRACES_EXPORTER (default otlp) lists otlp. */
export function otlpWanted(env: Env): boolean {
  if (!set(env.OTEL_EXPORTER_OTLP_ENDPOINT) && !set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)) return false;
  const exporters = set(env.OTEL_TRACES_EXPORTER) ? (env.OTEL_TRACES_EXPORTER as string) : 'otlp';
  return exporters.split(',').some((e) => e.trim() === 'otlp');
}

/** A sink that records each ended span into an exporting tracer; undefined (with a warning) when export cannot start. */
export function otlpSink(): SpanSink | undefined {
  const tracer = new Tracer({ threadName: 'main' });
  try {
    tracer.exportOtlp();
  } catch (e) {
    tracer.close();
    process.emitWarning(`hotspan/auto: OTLP export not started: ${(e as Error).message}`);
    return undefined;
  }
  const tracks = new Map<string, number>();
  return (s: AutoSpan): void => {
    try {
      let track = tracks.get(s.track);
      if (track === undefined) {
        track = tracer.track(s.track);
        tracks.set(s.track, track);
      }
      const b = tracer[internals]().backend;
      const token = b.asyncBegin(track, tracer.name(s.name), '');
      const kind = KINDS[s.track];
      const attrs = kind === undefined ? s.attrs : { ...s.attrs, 'hotspan.kind': kind };
      b.asyncFinish(token, s.error ? FLAG_ERROR : 0, s.start, s.end, -1, JSON.stringify(attrs));
    } catch {
      // A closed or full tracer: the span is counted there; the program's channel never sees a throw.
    }
  };
}
