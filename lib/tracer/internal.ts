// Test and demo hooks, not part of the public API: `tracer[internals]()`.

import type { Backend } from '../backends/backend';
import type { GcHook } from '../common/gc-hook';
import type { HandleTracker } from './handles';
import type { NativeTracer } from '../binding/native-binding';
import type { OtlpExporter } from '../otlp/otlp-exporter';
import type { DumpTrigger } from './dump-on';

export const internals: unique symbol = Symbol('hotspan.internals');

/**
 * `tracer[recording]`: the backend recording now (this.b, which
 * enableAsyncContext and close() swap). hotspan/otel reads it per span,
 * so it builds nothing (internals() makes an object and asks native()).
 */
export const recording: unique symbol = Symbol('hotspan.recording');

/**
 * The tracer's async context (lib/tracer/async-context.ts, AsyncContext) as
 * hotspan/otel uses it, by shape: the package's public declarations, which
 * reach this file, carry no Node types (AsyncLocalStorage).
 */
export interface AsyncContextHook {
  /** Runs `fn` with `current` (an async-context Current) as the current span. */
  runAsCurrent<T>(current: object, fn: () => T): T;
  /** Where it keeps its current span (an async-context CurrentStorage). */
  readonly storage: object;
}

export interface TracerInternals {
  readonly backend: Backend;
  readonly gcHook: GcHook | undefined;
  readonly handles: HandleTracker;
  /** The NativeTracer of a native tracer (pending(), nativeApi()). */
  readonly native: NativeTracer | undefined;
  /**
   * Turns the async context on (enableAsyncContext) and returns it;
   * undefined on a closed tracer. `storage` (an async-context
   * CurrentStorage): where it keeps its current span, if this call turns it on.
   */
  readonly asyncContext: (storage?: object) => AsyncContextHook | undefined;
  /** The exporter exportOtlp() started, if any. */
  readonly otlp: OtlpExporter | undefined;
  /** The dumpOn option's trigger, if any (hotspan/auto's roots trigger it: lib/auto.ts). */
  readonly dumps: DumpTrigger | undefined;
}
