// A backend's committed records frozen at one moment: what query() and the
// bounded and columnar snapshot forms read, so that several reads of one
// query or one batch iteration see the same records. Records are named by
// their global index: their position in snapshot order (timelines in order,
// records in commit order within each).

import { FIELDS_PER_RECORD } from '../common/flags';
import type { NativeSnapshot, StoredContext } from '../binding/native-binding';
import { queryColumns, spanIdsOfColumns } from '../binding/wasm-core';

export interface FrozenView {
  /** Records in the view. */
  readonly count: number;
  /** Columns of the records [offset, offset + limit) (both checked by the caller). */
  read(offset: number, limit: number): NativeSnapshot;
  /** Columns of the records at these global indices, in this order. */
  readAt(indices: Float64Array): NativeSnapshot;
  /** One step of the core's query engine: native/core/read/query_call.h. */
  query(name: string | undefined, args: Float64Array): Float64Array;
  /** W3C ids of every record, 5 per record in view order (native/core/record/span_ids.h; NativeTracer.spanIds). */
  spanIds(): BigUint64Array;
  /** The W3C tracestate of the records whose trace carries one (a remote parent's, inherited by its descendants), by view index. */
  spanTracestates(): ReadonlyMap<number, string>;
}

/** NativeTracer.spanTracestates's flat [index, tracestate, ...] as a map. */
export function tracestateMap(flat: ReadonlyArray<number | string>): ReadonlyMap<number, string> {
  const out = new Map<number, string>();
  for (let k = 0; k + 1 < flat.length; k += 2) out.set(flat[k] as number, flat[k + 1] as string);
  return out;
}

/** A copy of the columns of the records at `indices` (global indices of `snap`). */
function gather(snap: NativeSnapshot, indices: ArrayLike<number>): NativeSnapshot {
  const n = indices.length;
  const times = new Float64Array(2 * n);
  const fields = new Uint32Array(FIELDS_PER_RECORD * n);
  const where = new Map<number, number>();
  for (let k = 0; k < n; k++) {
    const i = indices[k];
    times[2 * k] = snap.times[2 * i];
    times[2 * k + 1] = snap.times[2 * i + 1];
    fields.set(snap.fields.subarray(i * FIELDS_PER_RECORD, (i + 1) * FIELDS_PER_RECORD), k * FIELDS_PER_RECORD);
    where.set(i, k);
  }
  const attrs: Array<[number, string]> = [];
  for (const [i, text] of snap.attrs) {
    const k = where.get(i);
    if (k !== undefined) attrs.push([k, text]);
  }
  const contexts: Array<[number, StoredContext]> = [];
  for (const [i, ctx] of snap.contexts ?? []) {
    const k = where.get(i);
    if (k !== undefined) contexts.push([k, ctx]);
  }
  return { names: snap.names, timelines: snap.timelines, count: n, times, fields, attrs, contexts };
}

/**
 * A view over columns held in JS (the js and noop backends' snapshot(),
 * records in snapshot order), queried through the WebAssembly core; its W3C
 * ids are those of the tracer whose salt is `salt`.
 */
export function columnsView(snap: NativeSnapshot, salt: bigint, sampler = 0n): FrozenView {
  let step: ((name: string | undefined, args: Float64Array) => Float64Array) | undefined;
  let ids: BigUint64Array | undefined;
  return {
    count: snap.count,
    spanIds() {
      if (snap.count === 0) return new BigUint64Array(0);
      // Resolved once per view: spanTracestates() reads the same words.
      return (ids ??= spanIdsOfColumns(snap, salt, sampler));
    },
    spanTracestates() {
      const out = new Map<number, string>();
      const contexts = snap.contexts ?? [];
      if (snap.count === 0 || !contexts.some(([, c]) => c.tracestate !== '')) return out;
      // The core marks each record with the stored context its trace came from (hs_span_ids).
      const words = this.spanIds();
      for (let i = 0; i < snap.count; i++) {
        const from = Number(words[5 * i + 4] >> 32n);
        if (from === 0) continue;
        const ts = contexts[from - 1][1].tracestate;
        if (ts !== '') out.set(i, ts);
      }
      return out;
    },
    read(offset, limit) {
      if (offset === 0 && limit === snap.count) return snap;
      const indices = new Float64Array(limit);
      for (let k = 0; k < limit; k++) indices[k] = offset + k;
      return gather(snap, indices);
    },
    readAt(indices) {
      return gather(snap, indices);
    },
    query(name, args) {
      step ??= queryColumns(snap);
      return step(name, args);
    },
  };
}
