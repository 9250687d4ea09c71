// The recording core (native/core/record/) in the WebAssembly module: the
// same tracer, timelines, memory budget, tracks and groups the addon runs,
// on the one thread of an instance (native/wasm/record_exports.cc). Each
// recorder owns its instance, so its records and memory go with it.
// Times are performance.now() ms on the axis of `originNs`.

import type { ClockReadings } from '../common/clock';
import type { TimelineCounts } from '../common/counts';
import type { NativeSnapshot } from './native-binding';
import type { DocumentCounts } from './wasm-core';
import { decodeColumns } from './wasm-columns';
import { FORMAT_CODES, STATUS_TEXT, newInstance, type Exports } from './wasm-core';
import { DEFAULT_PREFAULT, Prefaulter, type PrefaultOptions } from './wasm-prefault';

/** What a full budget does: recycle the oldest records, or drop new ones. */
export type FullPolicy = 'overwrite' | 'drop';

/** A given trace context: [trace hi, trace lo, parent wire id, parent span id (0n: none)], W3C flags, tracestate. */
export interface GivenContext {
  readonly ids: BigUint64Array;
  readonly flags: number;
  readonly tracestate: string;
}

export interface WasmRecorderOptions {
  /** The budget for records and side tables, in bytes (clamped to the core's bounds). */
  memoryLimit: number;
  onFull: FullPolicy;
  /** CLOCK_MONOTONIC ns at performance.now() == 0. */
  originNs: bigint;
  /** The salt of the W3C ids; 0n (the default): random. */
  idSalt?: bigint;
  /** The head sampler word (native/core/record/sampler.h); 0n (the default): parentbased_always_on. */
  sampler?: bigint;
  /** The tail keep word of its OTLP export (native/core/record/tail_keep.h); 0n (the default): none. */
  keep?: bigint;
  /** The process's name in its documents (write()); default the core's, "hotspan". */
  processName?: string;
  /** Span names that keep their trace whole in the tracer's tail keep (sample.keep.names): its documents keep them. */
  keepNames?: readonly string[];
  /**
   * The worker touching fresh pages ahead of the records (./wasm-prefault); false: none. Default
   * DEFAULT_PREFAULT, or none under HOTSPAN_CHUNK_RESERVE=0 (as the native core's chunk reserve).
   */
  prefault?: PrefaultOptions | false;
}

/** One take of the OTLP export's read: the records, those lost before it, those left, its watermark. */
export interface ExportTake {
  snap: NativeSnapshot;
  lost: number;
  left: number;
  /** ms on the records' axis: every record that ended at or before it was taken (Infinity: none left). */
  readThroughMs: number;
}

const POLICY_CODES: Record<FullPolicy, number> = { overwrite: 0, drop: 1 };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

// A recorder dropped unclosed stops its prefault worker (which holds the memory) when collected.
const stopWhenCollected = new FinalizationRegistry<Prefaulter>((p) => p.stop());

export class WasmRecorder {
  private readonly c: Exports;
  private readonly tracer: number;
  private readonly prefault: Prefaulter | undefined;

  constructor(options: WasmRecorderOptions) {
    const config = options.prefault ?? (process.env.HOTSPAN_CHUNK_RESERVE === '0' ? false : DEFAULT_PREFAULT);
    let prefault: Prefaulter | undefined;
    this.c = newInstance(config === false ? undefined : (brk) => prefault?.heapEnd(brk));
    if (config !== false) {
      prefault = new Prefaulter(this.c.memory, config);
      stopWhenCollected.register(this, prefault);
    }
    this.prefault = prefault;
    const policy = Object.hasOwn(POLICY_CODES, options.onFull) ? POLICY_CODES[options.onFull] : -1;
    this.tracer = policy < 0 ? 0 : this.c.hs_rec_open(
      options.memoryLimit,
      policy,
      options.originNs,
      BigInt.asIntN(64, options.idSalt ?? 0n),
      BigInt.asIntN(64, options.sampler ?? 0n),
      BigInt.asIntN(64, options.keep ?? 0n),
    );
    if (this.tracer === 0) throw new RangeError(`unknown onFull policy ${JSON.stringify(options.onFull)}`);
    if (options.processName !== undefined && this.c.hs_rec_process_name(this.tracer, ...this.text(options.processName)) !== 0) {
      throw new RangeError(`hotspan: the core refused the process name ${JSON.stringify(options.processName)}`);
    }
    for (const name of options.keepNames ?? []) {
      if (this.c.hs_rec_keep_name(this.tracer, ...this.text(name)) !== 0) {
        throw new RangeError(`hotspan: the core refused the keep name ${JSON.stringify(name)}`);
      }
    }
  }

  /**
   * A JS thread's timeline; its handle (0 once closed, or for a timeline id
   * the core does not accept). `timeline`: 0 numbers it as this tracer's own;
   * a joined thread gives its tracer-wide id (firstJoinedTimeline() and up).
   */
  thread(displayName: string, timeline = 0): number {
    return this.c.hs_rec_thread(this.tracer, timeline, ...this.text(displayName));
  }

  /** The first timeline id of a joined thread: this tracer's own stay below it. */
  firstJoinedTimeline(): number {
    return this.c.hs_rec_first_joined_timeline();
  }

  /** Ends the thread's open spans as abandoned, marks its timeline exited; a core status. */
  detach(thread: number, nowMs: number): number {
    return this.c.hs_rec_detach(this.tracer, thread, nowMs);
  }

  intern(name: string): number {
    return this.c.hs_rec_intern(this.tracer, ...this.text(name));
  }

  begin(thread: number, name: number, nowMs: number): number {
    return this.c.hs_rec_begin(thread, name, nowMs);
  }

  /** begin with the attributes' JSON object text. */
  beginAttrs(thread: number, name: number, nowMs: number, attrsJson: string): number {
    return this.c.hs_rec_begin_attrs(thread, name, nowMs, ...this.text(attrsJson));
  }

  /** begin under a given context (the core's begin_in_context); a core status. */
  beginContext(thread: number, name: number, nowMs: number, attrsJson: string, given: GivenContext): number {
    const [ts, tsSize] = this.text(given.tracestate);
    const [at, size] = this.text(attrsJson);
    const ids = given.ids;
    return this.c.hs_rec_begin_context(thread, name, nowMs, at, size, ids[0], ids[1], ids[2], ids[3], given.flags, ts, tsSize);
  }

  /**
   * The W3C ids of the thread's innermost open span: trace hi, trace lo,
   * span, parent, flags | resolved << 8, its tracer-wide span id (all 0n: none open).
   */
  openIds(thread: number): BigUint64Array {
    const at = this.c.hs_alloc(6 * 8);
    try {
      const out = new BigUint64Array(this.c.memory.buffer, at, 6);
      out.fill(0n);
      this.c.hs_rec_open_ids(thread, at);
      return new BigUint64Array(this.c.memory.buffer, at, 6).slice();
    } finally {
      this.c.hs_free(at);
    }
  }

  /** The thread's open-span depth. */
  depth(thread: number): number {
    return this.c.hs_rec_depth(thread);
  }

  /** The local id of the thread's innermost open span (0: none). */
  innermost(thread: number): number {
    return this.c.hs_rec_innermost(thread);
  }

  end(thread: number, nowMs: number, flags = 0): number {
    return this.c.hs_rec_end(thread, nowMs, flags);
  }

  /** An async track's id (0: closed, or a track of the other kind). */
  track(name: string, serial: boolean): number {
    const [at, size] = this.text(name);
    return this.c.hs_rec_track(this.tracer, at, size, serial ? 1 : 0);
  }

  /**
   * The track `name` under the tracer-wide id `id` a shared tracer gave it
   * (0: closed, a track of the other kind, or of that name under another id).
   */
  trackAt(name: string, serial: boolean, id: number): number {
    const [at, size] = this.text(name);
    return this.c.hs_rec_track_at(this.tracer, at, size, serial ? 1 : 0, id);
  }

  /** A joined thread: the next async span on `track` takes the tracer-wide local id `local`; a core status. */
  asyncNextLocal(track: number, local: number): number {
    return this.c.hs_rec_async_next_local(this.tracer, track, local);
  }

  /** A joined thread: the groups timeline, made under the explicit id `id`; its id (0: closed or not accepted). */
  groupsAt(id: number): number {
    return this.c.hs_rec_groups_at(this.tracer, id);
  }

  /** An async span's token (0n: closed or unknown track). */
  asyncBegin(track: number, name: number, nowMs: number, attrsJson = ''): bigint {
    return this.c.hs_rec_async_begin(this.tracer, track, name, nowMs, ...this.text(attrsJson));
  }

  /** asyncBegin under a given context; its token (0n: closed or unknown track). */
  asyncBeginContext(track: number, name: number, nowMs: number, attrsJson: string, given: GivenContext): bigint {
    const [ts, tsSize] = this.text(given.tracestate);
    const [at, size] = this.text(attrsJson);
    const ids = given.ids;
    return this.c.hs_rec_async_begin_context(this.tracer, track, name, nowMs, at, size, ids[0], ids[1], ids[2], ids[3], given.flags, ts, tsSize);
  }

  /** asyncEnd with changes: start / end ms (NaN: the begin's / now), a name id (-1: the begin's), attributes (undefined: the begin's). */
  asyncFinish(token: bigint, nowMs: number, flags: number, startMs: number, endMs: number, name: number, attrsJson: string | undefined): number {
    const [at, size] = this.text(attrsJson ?? '');
    const nameId = name < 0 ? 0xffffffff : name;
    return this.c.hs_rec_async_finish(this.tracer, token, nowMs, flags, startMs, endMs, nameId, attrsJson === undefined ? 0 : 1, at, size);
  }

  asyncEnd(token: bigint, nowMs: number, flags = 0): number {
    return this.c.hs_rec_async_end(this.tracer, token, nowMs, flags);
  }

  /** [token, name id] of the async spans still open. */
  openAsync(): Array<[bigint, number]> {
    this.c.hs_rec_open_async(this.tracer);
    const pairs = new Float64Array(this.c.memory.buffer, this.c.hs_result_data(), this.c.hs_result_size() / 8);
    const out: Array<[bigint, number]> = [];
    for (let i = 0; i < pairs.length; i += 2) out.push([BigInt(pairs[i]), pairs[i + 1]]);
    return out;
  }

  groupBegin(name: number, nowMs: number, attrsJson = ''): number {
    return this.c.hs_rec_group_begin(this.tracer, name, nowMs, ...this.text(attrsJson));
  }

  openGroups(): number {
    return this.c.hs_rec_open_groups(this.tracer);
  }

  /** A sample of counter `name` at `nowMs`; a core status. */
  counter(name: string, nowMs: number, value: number): number {
    return this.c.hs_rec_counter(this.tracer, ...this.text(name), nowMs, value);
  }

  groupEnd(nowMs: number): number {
    return this.c.hs_rec_group_end(this.tracer, nowMs);
  }

  /** produced = kept + overwritten + dropped, over everything recorded so far. */
  counts(): DocumentCounts {
    const at = this.c.hs_alloc(5 * 8);
    try {
      this.c.hs_rec_counts(this.tracer, at);
      const [produced, kept, released, overwritten, dropped] = new Float64Array(this.c.memory.buffer, at, 5);
      return { produced, kept, released, overwritten, dropped };
    } finally {
      this.c.hs_free(at);
    }
  }

  /** Per timeline: produced = kept + released + overwritten + dropped. */
  timelines(): TimelineCounts[] {
    this.c.hs_rec_timelines(this.tracer);
    const at = this.c.hs_result_data();
    const buf = this.c.memory.buffer;
    const n = new Uint32Array(buf, at, 1)[0];
    const rows = new Float64Array(buf, at + 8, 6 * n);
    const ends = new Uint32Array(buf, at + 8 + 48 * n, n);
    const bytes = new Uint8Array(buf, at + 8 + 52 * n, n === 0 ? 0 : ends[n - 1]);
    const out: TimelineCounts[] = [];
    for (let i = 0, from = 0; i < n; from = ends[i++]) {
      const [id, produced, kept, released, overwritten, dropped] = rows.subarray(6 * i, 6 * i + 6);
      out.push({ id, name: decoder.decode(bytes.subarray(from, ends[i])), produced, kept, released, overwritten, dropped });
    }
    return out;
  }

  /** The committed records (flushed first), grouped by timeline in id order, as the addon's snapshot. */
  snapshot(): NativeSnapshot {
    this.c.hs_rec_snapshot(this.tracer);
    return decodeColumns(new Uint8Array(this.c.memory.buffer, this.c.hs_result_data(), this.c.hs_result_size()));
  }

  /** Opens the OTLP export's read (native/core/export/export_cursor.h) at what the tracer holds now. */
  exportOpen(): void {
    const status = this.c.hs_rec_export_open(this.tracer);
    if (status !== 0) throw new Error(`hotspan: the core could not open an export read (one is open, or every reader slot is taken): ${STATUS_TEXT[status] ?? String(status)}`);
  }

  /**
   * Up to `max` records committed since the last take (flushed first),
   * which the budget then takes back first (counted released); the records
   * lost before they were taken; those left. Names: the whole table.
   */
  exportTake(max: number): ExportTake {
    const at = this.c.hs_alloc(3 * 8);
    try {
      const status = this.c.hs_rec_export_take(this.tracer, max, at);
      if (status !== 0) throw new Error(`hotspan: the core could not take records for export: ${STATUS_TEXT[status] ?? String(status)}`);
      const [lost, left, readThroughMs] = new Float64Array(this.c.memory.buffer, at, 3);
      const snap = decodeColumns(new Uint8Array(this.c.memory.buffer, this.c.hs_result_data(), this.c.hs_result_size()));
      return { snap, lost, left, readThroughMs };
    } finally {
      this.c.hs_free(at);
    }
  }

  /** Closes the export's read: the budget no longer keeps records for it. */
  exportClose(): void {
    this.c.hs_rec_export_close(this.tracer);
  }

  /** The whole trace as one document, with its counts. */
  write(format: keyof typeof FORMAT_CODES, clocks: ClockReadings): Uint8Array {
    const { monotonicNs, realtimeNs, boottimeNs = -1n } = clocks;
    const status = this.c.hs_rec_write(this.tracer, FORMAT_CODES[format], monotonicNs, realtimeNs, boottimeNs);
    if (status !== 0) throw new Error(`hotspan: the core could not write: ${STATUS_TEXT[status] ?? String(status)}`);
    return new Uint8Array(this.c.memory.buffer, this.c.hs_result_data(), this.c.hs_result_size()).slice();
  }

  /** The records the last write() put in its document (a sampling tracer's: its kept traces'). */
  written(): number {
    return this.c.hs_rec_written();
  }

  // ---- joined threads (native/core/read/handover_batch.h): a worker records
  // in a recorder of its own and hands its finished records to the tracer's ----

  /** A hand-over source over this recorder's records (0: no consumer slot left). */
  handoverOpen(): number {
    return this.c.hs_rec_handover_open(this.tracer);
  }

  /** The records committed since the last take, the names and the losses since, as one batch of bytes (a copy). */
  handoverTake(source: number, maxRecords = 0xffffffff): Uint8Array {
    this.c.hs_rec_handover_take(source, maxRecords);
    return new Uint8Array(this.c.memory.buffer, this.c.hs_result_data(), this.c.hs_result_size()).slice();
  }

  /** A batch from handoverTake without its records (its names and lost count: what a refused batch carries), as a copy. */
  handoverStrip(batch: Uint8Array): Uint8Array {
    const at = this.c.hs_alloc(batch.length);
    new Uint8Array(this.c.memory.buffer, at, batch.length).set(batch);
    const status = this.c.hs_rec_handover_strip(at, batch.length);
    if (status !== 0) throw new Error(`hotspan: the core could not cut a hand-over batch: ${STATUS_TEXT[status] ?? String(status)}`);
    return new Uint8Array(this.c.memory.buffer, this.c.hs_result_data(), this.c.hs_result_size()).slice();
  }

  handoverFree(source: number): void {
    this.c.hs_rec_handover_free(source);
  }

  /**
   * A timeline for a joined thread's handed-over records, under the
   * tracer-wide id its own recorder numbers its spans with: its handle (0:
   * closed, or an id below firstJoinedTimeline() or already taken).
   */
  importThread(displayName: string, timeline: number): number {
    return this.c.hs_rec_import_thread(this.tracer, timeline, ...this.text(displayName));
  }

  /** Stores a batch from handoverTake or handoverStrip (a refused one: its names and losses only; its records were counted lost where back-pressure refused them); a core status. */
  importBatch(imported: number, batch: Uint8Array): number {
    const at = batch.length === 0 ? 0 : this.c.hs_alloc(batch.length);
    if (at !== 0) new Uint8Array(this.c.memory.buffer, at, batch.length).set(batch);
    return this.c.hs_rec_import(imported, at, batch.length);
  }

  /** Marks the joined thread's timeline exited and frees its handle; a core status. */
  importExited(imported: number): number {
    return this.c.hs_rec_import_exited(imported);
  }

  /** The instance's memory in bytes (native/wasm/sbrk.cc grows it by doubling, up to 64 MiB steps). */
  memoryBytes(): number {
    return this.c.memory.buffer.byteLength;
  }

  /** Records nothing more (calls return CLOSED); what was recorded stays writable. */
  close(): void {
    this.prefault?.stop();
    this.c.hs_rec_close(this.tracer);
  }

  /** Closes and frees the records; the recorder is unusable after. */
  free(): void {
    this.prefault?.stop();
    this.c.hs_rec_free(this.tracer);
  }

  /** Whether the prefault worker runs (it starts once the heap passes its startBytes). */
  prefaulting(): boolean {
    return this.prefault?.running() ?? false;
  }

  /** Blocks until the prefault worker has touched all it was asked to so far (none running: at once). */
  settlePrefault(): void {
    this.prefault?.settle();
  }

  /** The text copied into an hs_alloc buffer, which the call it is given to takes over; '' is none. */
  private text(s: string): [number, number] {
    if (s === '') return [0, 0];
    const bytes = encoder.encode(s);
    const at = this.c.hs_alloc(bytes.length);
    new Uint8Array(this.c.memory.buffer, at, bytes.length).set(bytes);
    return [at, bytes.length];
  }
}
