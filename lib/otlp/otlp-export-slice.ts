// What the js backend's tracer thread hands its OTLP exporter's worker
// (lib/otlp/otlp-js-source.ts): types only, with no Node import, so the public
// declarations that name them (wasm-backend, otlp-exporter) stand alone.

import type { NativeSnapshot } from '../binding/native-binding';

/** A hand-over from the tracer's thread (OtlpExporter): records, those lost before, those left there. */
export interface ExportSlice {
  snap: NativeSnapshot;
  lost: number;
  left: number;
  /** The read watermark, ms on the records' axis: every record that ended at or before it was handed over (Infinity: none left). */
  readThroughMs: number;
}

/** What the worker needs of a js tracer (structured-clonable). */
export interface JsExportInfo {
  salt: bigint;
  /** The tracer's head sampler word (native/core/record/sampler.h). */
  sampler: bigint;
  /** Its tail keep word (native/core/record/tail_keep.h). */
  keep: bigint;
  /** Its tail keep's span names (sample.keep.names). */
  keepNames: readonly string[];
  /** ns since the Unix epoch at the tracer's performance.now() origin. */
  unixOffsetNs: bigint;
}
