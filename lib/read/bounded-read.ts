// The bounded and columnar forms of snapshot(), and the refusal of a plain
// snapshot() whose records would not fit the V8 heap: materializing records
// past the heap limit aborts the whole process, which a production tracer's
// reads must never do.

import { getHeapStatistics } from 'node:v8';
import { describe } from '../common/errors';
import type { FrozenView } from './frozen-view';
import type { NativeSnapshot } from '../binding/native-binding';
import { checkCallOptions } from '../tracer/options';
import { toRecords, type SpanRecord } from './records';

/** Which records `snapshot({ offset, limit })` and `snapshotColumns()` return. */
export interface SnapshotOptions {
  /** First record, in snapshot order (timelines in order, commit order within each). Default 0. */
  offset?: number;
  /** At most this many records. Default: all from `offset` on. */
  limit?: number;
}

/** How `snapshotBatches()` splits the records. */
export interface SnapshotBatchOptions {
  /** Records per batch. Default 65536. */
  batch?: number;
}

/** snapshot()'s records as typed columns (lib/binding/native-binding.ts NativeSnapshot), plus where they sit. */
export interface SnapshotColumns extends NativeSnapshot {
  /** Index of the first record in the whole snapshot. */
  offset: number;
  /** Records in the whole snapshot (all of them, not only these). */
  total: number;
}

/**
 * V8 heap one materialized SpanRecord takes, with its share of the array
 * holding it: about 200 bytes measured on Node 20 (bench/cases/bigread.mjs
 * prints it), rounded up so the estimate errs towards refusing.
 */
export const RECORD_HEAP_BYTES = 256;
/** Part of the free heap a result may take: the rest is left to the program. */
const HEAP_SHARE = 0.5;
const DEFAULT_BATCH = 65536;

function count(value: unknown, what: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`hotspan: ${what} must be an integer >= ${String(min)}, got ${describe(value)}`);
  }
  return value;
}

/** [offset, limit] of `options` over a view of `total` records, clamped to it. */
function range(options: SnapshotOptions | undefined, total: number, what: string): [number, number] {
  const o = checkCallOptions(options, what, ['offset', 'limit']) ?? {};
  const offset = Math.min(o.offset === undefined ? 0 : count(o.offset, `${what} offset`, 0), total);
  const limit = o.limit === undefined ? total - offset : Math.min(count(o.limit, `${what} limit`, 0), total - offset);
  return [offset, limit];
}

/** Throws, naming the bounded forms, when `records` SpanRecords would not fit the free heap. */
export function checkFits(records: number, what: string): void {
  const heap = getHeapStatistics();
  const free = heap.heap_size_limit - heap.used_heap_size;
  const need = records * RECORD_HEAP_BYTES;
  if (need <= free * HEAP_SHARE) return;
  const mib = (b: number): string => `${String(Math.round(b / 2 ** 20))} MiB`;
  throw new RangeError(
    `hotspan: ${what} of ${String(records)} records would take about ${mib(need)} of V8 heap, ` +
      `more than half of the ${mib(free)} free (heap limit ${mib(heap.heap_size_limit)}); nothing was read. ` +
      'Read it in parts with snapshot({ offset, limit }) or snapshotBatches({ batch }), as typed arrays with ' +
      'snapshotColumns({ offset, limit }), or ask query() and stats(), which the core answers without materializing records',
  );
}

export function boundedSnapshot(view: FrozenView, options: SnapshotOptions | undefined): readonly SpanRecord[] {
  const [offset, limit] = range(options, view.count, 'snapshot');
  checkFits(limit, options === undefined ? 'snapshot()' : 'snapshot({ offset, limit })');
  return toRecords(view.read(offset, limit));
}

export function snapshotColumns(view: FrozenView, options: SnapshotOptions | undefined): SnapshotColumns {
  const [offset, limit] = range(options, view.count, 'snapshotColumns');
  return { ...view.read(offset, limit), offset, total: view.count };
}

export function* snapshotBatches(view: FrozenView, batch: number): Generator<readonly SpanRecord[], void, undefined> {
  for (let offset = 0; offset < view.count; offset += batch) {
    yield toRecords(view.read(offset, Math.min(batch, view.count - offset)));
  }
}

export function batchSize(options: SnapshotBatchOptions | undefined): number {
  const o = checkCallOptions(options, 'snapshotBatches', ['batch']) ?? {};
  const batch = o.batch === undefined ? DEFAULT_BATCH : count(o.batch, 'snapshotBatches batch', 1);
  checkFits(batch, 'a snapshotBatches() batch');
  return batch;
}
