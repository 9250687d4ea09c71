// hotspan/auto's eventloop instrument (lib/auto/auto-record.ts): the event-loop
// delay as perf_hooks' monitorEventLoopDelay() measures it. Each sample is
// the time between two ticks of a EVENT_LOOP_RESOLUTION_MS timer (so an idle
// loop reads about that much), the first tick only starting the clock. Each
// interval's max and mean become two counter samples; at stop, the last
// partial interval's, with the tick still due when the loop is still running
// (process.exit() or a signal in or right after a block).
//
// When the loop has drained ('beforeExit': nothing is left to run), the time
// since the last tick is no delay: the process is ending, and the timer,
// unref'd, no longer fires. (Counting it gave every short run a sample of
// its exit time, far above monitorEventLoopDelay's: max 112.6 ms and the
// mean half of it, from two samples.)
//
// Not monitorEventLoopDelay itself: its reset() also forgets the time of its
// last tick, so a block right after a reset would be lost.

import { performance } from 'node:perf_hooks';

/** The event-loop delay counters, and how often a sample of each is recorded. */
export const EVENT_LOOP_MAX = 'event loop delay max (ms)';
export const EVENT_LOOP_MEAN = 'event loop delay mean (ms)';
export const EVENT_LOOP_INTERVAL_MS = 1000;
/**
 * The period of the timer whose ticks are the samples: monitorEventLoopDelay's
 * default, so both read alike, and a stall of B ms reads B to B + 10 ms.
 */
export const EVENT_LOOP_RESOLUTION_MS = 10;

/** Records a counter sample at now (Tracer.counter). */
export type CounterSink = (name: string, value: number) => void;

/** Starts sampling, a sample pair every `interval` ms into `counter`; returns what stops it (recording the last partial interval). */
export function sampleEventLoop(counter: CounterSink, interval: number): () => void {
  let max = 0;
  let sum = 0;
  let samples = 0;
  let last: number | undefined;
  let next = performance.now() + interval;
  let drained = false;
  const take = (now: number): void => {
    if (last !== undefined) {
      const d = now - last;
      if (d > max) max = d;
      sum += d;
      samples++;
    }
    last = now;
  };
  const record = (): void => {
    if (samples === 0) return;
    counter(EVENT_LOOP_MAX, max);
    counter(EVENT_LOOP_MEAN, sum / samples);
    max = sum = samples = 0;
  };
  const timer = setTimeout(function tick() {
    const now = performance.now();
    drained = false;
    take(now);
    if (now >= next) {
      record();
      next = now + interval;
    }
    timer.refresh();
  }, EVENT_LOOP_RESOLUTION_MS);
  timer.unref();
  const onDrained = (): void => {
    drained = true;
  };
  process.on('beforeExit', onDrained);
  return () => {
    clearTimeout(timer);
    process.removeListener('beforeExit', onDrained);
    const now = performance.now();
    if (!drained && last !== undefined && now - last > EVENT_LOOP_RESOLUTION_MS) take(now);
    record();
  };
}
