// The core's writers, stats and query engine compiled to WebAssembly (native/wasm/,
// scripts/build-wasm.sh), for the backends that record in JS: they hand
// their columns (the NativeSnapshot shape) to the same C++ that writes the
// native backend's files, so each format and statistic has one
// implementation. The module (its imports: newInstance) is compiled synchronously
// on first use. WebAssembly memory never shrinks, so an instance is kept
// only while its memory stays small: a large document's instance is dropped
// and its memory goes with the result.

import { randomFillSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClockReadings } from '../common/clock';
import { FIELDS_PER_RECORD, FIELD_LOCAL, FIELD_TIMELINE } from '../common/flags';
import type { NativeSnapshot, NativeStatsRow } from './native-binding';
import { profilesBound, putProfiles } from './wasm-columns';

// The module's exports: the generated entry points, and what the toolchain adds.
export interface Exports extends WasmExports {
  /** Shared (scripts/build-wasm.sh): its buffer is a SharedArrayBuffer, a new one after each growth. */
  memory: { buffer: ArrayBuffer };
  _initialize(): void;
}
// <generated from schema/boundary.json by scripts/gen-boundary.mjs (npm run gen)>
/** native/wasm/exports.h's entry points, as the module's exports. */
export interface WasmExports {
  /** An input buffer of `bytes` bytes (1 for 0) in the module's memory. */
  hs_alloc(bytes: number): number;
  /** Frees a buffer hs_alloc gave that no call took over. */
  hs_free(p: number): void;
  /** Where the last call's result is, until the next call. */
  hs_result_data(): number;
  /** The last call's result size in bytes. */
  hs_result_size(): number;
  /** One whole document of the columns into the result; takes the input over. The i64s are ns: the origin, then the clock readings. counts: the address of 5 doubles (produced, kept, released, overwritten, dropped), or 0 for none. pid: the process's (0: the writers' default, 1). name: the process's name (UTF-8, taken over; name_size 0: the writers' default, "hotspan"). */
  hs_write(input: number, size: number, format: number, originNs: bigint, monotonicNs: bigint, realtimeNs: bigint, boottimeNs: bigint, counts: number, pid: number, name: number, nameSize: number): number;
  /** An incremental document: its handle (0: unknown format). */
  hs_writer_begin(format: number, originNs: bigint, monotonicNs: bigint, realtimeNs: bigint, boottimeNs: bigint): number;
  /** Appends a batch of columns to an incremental document (takes the input over); the bytes made are the result. */
  hs_writer_append(handle: number, input: number, size: number): number;
  /** The process of the batches appended next to an incremental document (DocumentWriter::set_process): its pid and name (UTF-8, taken over; name_size 0: the writers' default, "hotspan"). */
  hs_writer_process(handle: number, pid: number, name: number, nameSize: number): number;
  /** Finishes an incremental document; its last bytes are the result. */
  hs_writer_finish(handle: number): number;
  /** The stats rows of the columns into the result, as f64 rows of the stats row's width (times in ns); takes the input over. */
  hs_stats(input: number, size: number): number;
  /** Takes the input over; returns a query handle (0: malformed columns). */
  hs_query_open(input: number, size: number): number;
  /** One step of native/core/read/query_call.h into the result as f64; name_size 0xFFFFFFFF: no name. */
  hs_query(q: number, args: number, name: number, nameSize: number): number;
  /** The W3C ids of the columns' records under a head sampler; takes both buffers over (contexts: 6 u64 each, 0 when count is 0). */
  hs_span_ids(input: number, size: number, contexts: number, count: number, salt: bigint, sampler: bigint): number;
  /** [wire id, trace hi, trace lo, trace flags] of a span id as a root under a head sampler. */
  hs_root_ids(span: bigint, salt: bigint, sampler: bigint): number;
  /** An OTLP encoder under a head sampler and a tail keep: takes the resource buffer over; returns a handle (0: malformed). */
  hs_otlp_open(resource: number, size: number, encoding: number, unixOffsetNs: bigint, salt: bigint, sampler: bigint, keep: bigint): number;
  /** A span name (UTF-8, taken over) whose trace the encoder's tail keep keeps whole; 0 ok, else a status. */
  hs_otlp_keep_name(handle: number, name: number, size: number): number;
  /** One OTLP read: takes the columns and the contexts over; read_through_ms: the read watermark (ms on the columns' axis; Infinity: none); result: u32 spans, u32 held, u32 sampled out, u32 keep timed out, the request. */
  hs_otlp_next(handle: number, input: number, size: number, contexts: number, contextsSize: number, count: number, maxSpans: number, final: number, unread: number, readThroughMs: number): number;
  /** The recording core: a tracer (times given as ms on the performance.now() axis from origin_ns, CLOCK_MONOTONIC; the budget in bytes, on_full 0 overwrite / 1 drop; its id salt, head sampler word (record/sampler.h) and tail keep word (record/tail_keep.h)); its handle (0: bad on_full). */
  hs_rec_open(memoryLimit: number, onFull: number, originNs: bigint, idSalt: bigint, sampler: bigint, keep: bigint): number;
  /** Closes a tracer: later calls record nothing and return CLOSED; its records stay readable. */
  hs_rec_close(tracer: number): void;
  /** Closes a tracer and frees its handle and records. */
  hs_rec_free(tracer: number): void;
  /** Attaches a JS thread's timeline named by the buffer (taken over); timeline 0 numbers it as the tracer's own, else it is a joined thread's tracer-wide id (hs_rec_first_joined_timeline and up, below 2^21); the thread's handle (0: closed or unknown tracer, or an id not accepted). */
  hs_rec_thread(tracer: number, timeline: number, name: number, size: number): number;
  /** The first timeline id of a joined thread (record/registry.h): a tracer's own timelines stay below it, so a shared tracer's counter of joined threads' ids starts here. */
  hs_rec_first_joined_timeline(): number;
  /** Ends the thread's open spans as abandoned at `now`, marks its timeline exited and frees the thread's handle; a core status. */
  hs_rec_detach(tracer: number, thread: number, nowMs: number): number;
  /** The id of the name in the buffer (taken over); 0xFFFFFFFF for an unknown tracer. */
  hs_rec_intern(tracer: number, name: number, size: number): number;
  /** A span begins on the thread; a core status. */
  hs_rec_begin(thread: number, name: number, nowMs: number): number;
  /** A span begins on the thread with the attribute JSON in the buffer (taken over); a core status. */
  hs_rec_begin_attrs(thread: number, name: number, nowMs: number, attrs: number, size: number): number;
  /** A span begins under a given context (the core's begin_in_context): its trace and parent wire id, W3C flags and tracestate (buffer taken over), and a tracer-wide parent span id (0: none); attributes as hs_rec_begin_attrs; a core status. */
  hs_rec_begin_context(thread: number, name: number, nowMs: number, attrs: number, size: number, traceHi: bigint, traceLo: bigint, parentWire: bigint, parentSpan: bigint, flags: number, tracestate: number, tracestateSize: number): number;
  /** The W3C ids of the thread's innermost open span at `out` (6 u64): trace hi, trace lo, span, parent, flags | resolved << 8, its tracer-wide span id (0: none open); a core status. */
  hs_rec_open_ids(thread: number, out: number): number;
  /** The thread's open-span depth (0: none, or an unknown thread). */
  hs_rec_depth(thread: number): number;
  /** The local id of the thread's innermost open span (0: none). */
  hs_rec_innermost(thread: number): number;
  /** The thread's innermost span ends, with extra span flags; a core status. */
  hs_rec_end(thread: number, nowMs: number, flags: number): number;
  /** The async track named by the buffer (taken over), made on first use; its id (0: closed, or a track of the other kind). */
  hs_rec_track(tracer: number, name: number, size: number, serial: number): number;
  /** hs_rec_track under an explicit tracer-wide timeline id (0: this tracer's own numbering; else any id below 2^21 not taken), as a joined thread's instance and the tracer it joined number a shared track; its id (0: closed, a track of the other kind, of that name under another id, or an id not accepted). */
  hs_rec_track_at(tracer: number, name: number, size: number, serial: number, id: number): number;
  /** A joined thread's instance: the next async span begun on the track takes the local id given (by the shared tracer, so its span id is the tracer-wide one); a core status (Invalid: unknown track, or 0). */
  hs_rec_async_next_local(tracer: number, track: number, local: number): number;
  /** The groups timeline, made (if not yet) under the explicit id given (0: this tracer's own numbering; else as hs_rec_thread's), so a joined thread's instance keeps its own ids clear of the shared tracer's track ids; its id (0: closed, or an id not accepted). */
  hs_rec_groups_at(tracer: number, id: number): number;
  /** An async span begins on a track, with the attribute JSON in the buffer (taken over; size 0: none); its token (0: closed or unknown track). */
  hs_rec_async_begin(tracer: number, track: number, name: number, nowMs: number, attrs: number, size: number): bigint;
  /** hs_rec_async_begin under a given context (as hs_rec_begin_context); its token (0: closed or unknown track). */
  hs_rec_async_begin_context(tracer: number, track: number, name: number, nowMs: number, attrs: number, size: number, traceHi: bigint, traceLo: bigint, parentWire: bigint, parentSpan: bigint, flags: number, tracestate: number, tracestateSize: number): bigint;
  /** An async span ends with changes: a start and an end in ms (not finite: the begin's, `now`), a name id (0xFFFFFFFF: the begin's), attributes replacing the begin's when has_attrs; a core status. */
  hs_rec_async_finish(tracer: number, token: bigint, nowMs: number, flags: number, startMs: number, endMs: number, name: number, hasAttrs: number, attrs: number, size: number): number;
  /** An async span ends, with extra span flags; a core status. */
  hs_rec_async_end(tracer: number, token: bigint, nowMs: number, flags: number): number;
  /** The async spans still open; result: f64 token, f64 name id per span; a core status. */
  hs_rec_open_async(tracer: number): number;
  /** A span group begins, with the attribute JSON in the buffer (taken over; size 0: none); a core status. */
  hs_rec_group_begin(tracer: number, name: number, nowMs: number, attrs: number, size: number): number;
  /** The innermost span group ends; a core status. */
  hs_rec_group_end(tracer: number, nowMs: number): number;
  /** How many span groups are open. */
  hs_rec_open_groups(tracer: number): number;
  /** A sample of the counter named by the buffer (taken over) at `now` (a core status). */
  hs_rec_counter(tracer: number, name: number, size: number, nowMs: number, value: number): number;
  /** Flushes, then writes 5 doubles at `out`: produced, kept, released, overwritten, dropped; a core status. */
  hs_rec_counts(tracer: number, out: number): number;
  /** Flushes; result: u32 timeline count T, u32 0, f64[6T] (id, produced, kept, released, overwritten, dropped), u32[T] end offsets of the names, then the names (UTF-8); a core status. */
  hs_rec_timelines(tracer: number): number;
  /** A joined thread's hand-over source over the tracer it records in (read/handover_batch.h): a handle, 0 for an unknown tracer or no consumer slot left. */
  hs_rec_handover_open(tracer: number): number;
  /** Result: a hand-over batch of the records committed since the last take (at most max_records; a joined thread holds, so its records commit as they end), the names interned and the spans lost since; returns the records in it. */
  hs_rec_handover_take(source: number, maxRecords: number): number;
  /** Result: the batch (the buffer, taken over) without its records: its names and lost count, all a refused batch carries (read/handover_batch.h strip_records); a core status (Invalid: not a whole batch). */
  hs_rec_handover_strip(batch: number, size: number): number;
  /** Frees the source's handle: its records no longer wait for it. */
  hs_rec_handover_free(source: number): void;
  /** A timeline (named by the buffer, taken over) for a joined thread's handed-over records (record/imported_thread.h), under the tracer-wide id its own instance numbers its spans with (hs_rec_first_joined_timeline and up, below 2^21): a handle, 0 for an unknown or closed tracer or an id not accepted (below the first, 2^21 or above, or taken). */
  hs_rec_import_thread(tracer: number, timeline: number, name: number, size: number): number;
  /** Stores a hand-over batch (the buffer, taken over) on the imported thread's timeline under its tracer's budget (a batch hs_rec_handover_strip cut carries its names and lost count only: back-pressure refused its records, which the sender's hub counted lost); a core status (Invalid: not a whole batch). */
  hs_rec_import(imported: number, batch: number, size: number): number;
  /** Marks the imported thread's timeline exited and frees its handle; a core status. */
  hs_rec_import_exited(imported: number): number;
  /** Flushes; result: the committed records in the columns layout of native/wasm/snapshot_columns.h, times as ms from the tracer's origin, then its stored contexts; a core status. */
  hs_rec_snapshot(tracer: number): number;
  /** Opens the tracer's OTLP export read (export/export_cursor.h) at what it holds now; INVALID when one is open or every consumer slot is taken. A core status. */
  hs_rec_export_open(tracer: number): number;
  /** Flushes; result: up to max_records records committed since the last take, in the columns layout of hs_rec_snapshot (names: the whole table); at `out` 3 doubles: records lost before they were taken (since the last take), records committed and not taken, the read watermark (ms on the columns' axis: every record that ended at or before it was taken; Infinity: none left). A core status. */
  hs_rec_export_take(tracer: number, maxRecords: number, out: number): number;
  /** Closes the tracer's export read: its chunks no longer wait for it. */
  hs_rec_export_close(tracer: number): void;
  /** Flushes, then one whole document of the tracer's records into the result, with its counts; the clock readings are the caller's. */
  hs_rec_write(tracer: number, format: number, monotonicNs: bigint, realtimeNs: bigint, boottimeNs: bigint): number;
  /** Names the process in the tracer's documents (hs_rec_write) by the buffer (taken over; UTF-8, 1 to 1024 bytes; default "hotspan"); a core status (INVALID: an unknown tracer or a name out of bounds). */
  hs_rec_process_name(tracer: number, name: number, size: number): number;
  /** A span name (UTF-8, taken over) whose trace the tracer's tail keep keeps whole in its documents (hs_rec_write, read/trace_keep.h); a core status (INVALID: an unknown tracer or an empty name). */
  hs_rec_keep_name(tracer: number, name: number, size: number): number;
  /** The records the last hs_rec_write wrote (a sampling tracer's: those of its kept traces). */
  hs_rec_written(): number;
}
/** hs_write and hs_writer_begin: the code of each output format. */
export const FORMAT_CODES = { json: 0, perfetto: 1 } as const;
/** The entry points' status codes: what each says, by code. */
export const STATUS_TEXT = ['ok', 'malformed columns', 'unknown format', 'unknown writer handle'];
/** f64 per stats row (hs_stats): name, count, total, min, max, mean, p50, p90, p99. */
const STATS_ROW_DOUBLES = 9;
// </generated>
// The WebAssembly global, as far as this file uses it (lib "ES2022" has no types for it).
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Exports };
};

/** Where build-wasm.sh puts it, relative to lib/ and dist/ alike. */
const WASM_PATH = join(__dirname, '..', '..', 'native', 'wasm', 'hotspan_core.wasm');

// native/wasm/snapshot_columns.h: the input layout and its version.
const COLUMNS_VERSION = 1;
const HEADER_BYTES = 32;
const KIND_CODES = { js: 0, native: 1, track: 2, groups: 3 } as const;

/** Memory an instance may keep between calls. */
const KEEP_BYTES = 16 << 20;
/** wasm32 addresses: an input must fit below 4 GiB with room for its output. */
const MAX_BYTES = 2 ** 32;

let compiled: object | undefined;
let kept: Exports | undefined;

/**
 * A fresh instance of the module. Its imports are the host's clock (the
 * recording core's clock reads: CLOCK_MONOTONIC ns, as process.hrtime),
 * WASI's random_get (the random salt of a tracer's W3C ids) and `heapEnd`,
 * told each new end of the module's heap (native/wasm/sbrk.cc; default: none).
 * The memory is shared (a SharedArrayBuffer that growing does not detach).
 */
export function newInstance(heapEnd?: (brk: number) => void): Exports {
  compiled ??= new WebAssembly.Module(readFileSync(WASM_PATH));
  let memory: { buffer: ArrayBuffer } | undefined;
  const imports = {
    hotspan: { now_ns: (): bigint => process.hrtime.bigint(), heap_end: heapEnd ?? ((): void => {}) },
    wasi_snapshot_preview1: {
      random_get(at: number, size: number): number {
        if (memory === undefined) return 8; // WASI's EBADF: no memory yet
        randomFillSync(new Uint8Array(memory.buffer, at, size));
        return 0;
      },
    },
  };
  const { exports } = new WebAssembly.Instance(compiled, imports);
  memory = exports.memory;
  exports._initialize();
  return exports;
}

function instance(): Exports {
  kept ??= newInstance();
  return kept;
}

const encoder = new TextEncoder();

/**
 * Copies the columns into the module's memory (see snapshot_columns.h);
 * returns the input's address and size. Records may be in any timeline
 * order: the module groups them as the core's snapshot does.
 */
export function encode(c: Exports, snap: NativeSnapshot, serial: ReadonlySet<number>): [number, number] {
  const n = snap.count;
  const tls = snap.timelines;
  const counters = snap.counters ?? [];
  let samples = 0;
  for (const s of counters) samples += s.times.length;
  const strings: string[] = [...snap.names];
  for (const t of tls) strings.push(t.name);
  for (const [, text] of snap.attrs) strings.push(text);
  for (const s of counters) strings.push(s.name);
  let bound = 0;
  for (const s of strings) bound += 3 * s.length; // UTF-8 of a UTF-16 unit: at most 3 bytes
  const fixed =
    HEADER_BYTES +
    16 * n +
    16 * samples +
    4 * FIELDS_PER_RECORD * n +
    8 * tls.length +
    4 * snap.attrs.length +
    8 * counters.length +
    4 * strings.length;
  const profiles = snap.cpuProfiles ?? [];
  const tail = profilesBound(profiles);
  const ptr = fixed + bound + tail < MAX_BYTES ? c.hs_alloc(fixed + bound + tail) : 0;
  if (ptr === 0) throw tooLarge(n);
  const buf = c.memory.buffer; // after the allocation: it may have grown the memory
  const words = new Uint32Array(buf, ptr, fixed / 4);
  words.set([COLUMNS_VERSION, n, snap.names.length, tls.length, snap.attrs.length, counters.length, samples, profiles.length]);
  new Float64Array(buf, ptr + HEADER_BYTES, 2 * n).set(snap.times.subarray(0, 2 * n));
  const pairs = new Float64Array(buf, ptr + HEADER_BYTES + 16 * n, 2 * samples);
  let d = 0;
  for (const s of counters) {
    for (let i = 0; i < s.times.length; i++) {
      pairs[d++] = s.times[i];
      pairs[d++] = s.values[i];
    }
  }
  let w = (HEADER_BYTES + 16 * n + 16 * samples) / 4;
  words.set(snap.fields.subarray(0, FIELDS_PER_RECORD * n), w);
  w += FIELDS_PER_RECORD * n;
  for (const t of tls) {
    words[w++] = t.id;
    words[w++] = KIND_CODES[t.kind] | (serial.has(t.id) ? 1 << 8 : 0) | (t.exited ? 1 << 9 : 0);
  }
  for (const [index] of snap.attrs) words[w++] = index;
  for (const s of counters) {
    words[w++] = s.times.length;
    words[w++] = Math.min(s.dropped, 0xffffffff);
  }
  const bytes = new Uint8Array(buf, ptr + fixed, bound + tail);
  let end = 0;
  for (const s of strings) {
    end += encoder.encodeInto(s, bytes.subarray(end, bound)).written;
    words[w++] = end;
  }
  return [ptr, fixed + end + putProfiles(bytes.subarray(end), profiles)];
}

function tooLarge(records: number, cause?: Error): RangeError {
  return new RangeError(
    `hotspan: the WebAssembly core cannot hold ${String(records)} records and their document in its 4 GiB of memory` +
      `${cause ? ` (${cause.message})` : ''}; the native backend streams any size`,
    { cause },
  );
}

/** Runs `op` on the encoded columns; returns its result, which no later call changes. */
function run(snap: NativeSnapshot, serial: ReadonlySet<number>, op: (c: Exports, ptr: number, size: number) => number): Uint8Array {
  const c = instance();
  let status: number;
  try {
    const [ptr, size] = encode(c, snap, serial);
    status = op(c, ptr, size);
  } catch (e) {
    kept = undefined; // its heap may be half updated
    // An allocation that failed inside the module traps.
    if (e instanceof Error && e.constructor.name === 'RuntimeError') throw tooLarge(snap.count, e);
    throw e;
  }
  if (status !== 0) throw new Error(`hotspan: the WebAssembly core rejected its input (${STATUS_TEXT[status] ?? String(status)})`);
  const result = new Uint8Array(c.memory.buffer, c.hs_result_data(), c.hs_result_size());
  if (c.memory.buffer.byteLength <= KEEP_BYTES) return result.slice();
  kept = undefined; // the result keeps the memory alive, nothing else does
  return result;
}

/** The recording's counts a document carries in its metadata (native/core/write/document_info.h). */
export interface DocumentCounts {
  produced: number;
  kept: number;
  released: number;
  overwritten: number;
  dropped: number;
}

/**
 * The core's document of `format` for these columns (times on the
 * performance.now() axis, whose origin is `originNs` on CLOCK_MONOTONIC),
 * saying which clock its times are on by `clocks`, what became of the
 * recording by `counts` (none: not said), the process's name (none: the
 * writers' default, "hotspan") and its pid (0: the writers' default, 1).
 */
export function writeColumns(
  snap: NativeSnapshot,
  serial: ReadonlySet<number>,
  format: keyof typeof FORMAT_CODES,
  clocks: ClockReadings,
  originNs: bigint,
  counts?: DocumentCounts,
  processName?: string,
  pid = 0,
): Uint8Array {
  const { monotonicNs, realtimeNs, boottimeNs = -1n } = clocks;
  return run(snap, serial, (c, ptr, size) => {
    let at = 0;
    if (counts !== undefined) {
      at = c.hs_alloc(5 * 8);
      const { produced, kept, released, overwritten, dropped } = counts;
      new Float64Array(c.memory.buffer, at, 5).set([produced, kept, released, overwritten, dropped]);
    }
    const [name, nameSize] = utf8In(c, processName ?? '');
    const status = c.hs_write(ptr, size, FORMAT_CODES[format], originNs, monotonicNs, realtimeNs, boottimeNs, at, pid, name, nameSize);
    if (at !== 0) c.hs_free(at);
    return status;
  });
}

/** `text` as UTF-8 in an hs_alloc buffer for a call that takes it over: [address, bytes]; [0, 0] for ''. */
function utf8In(c: Exports, text: string): [number, number] {
  if (text === '') return [0, 0];
  const utf8 = encoder.encode(text);
  const at = c.hs_alloc(utf8.length);
  new Uint8Array(c.memory.buffer, at, utf8.length).set(utf8);
  return [at, utf8.length];
}

/** One query step: native/core/read/query_call.h's args, an optional name; its numbers. */
export type QueryStep = (name: string | undefined, args: Float64Array) => Float64Array;

/** native/core/read/query_call.h: kQueryArgs. */
const QUERY_ARGS = 8;
const NO_NAME = 0xffffffff;

/**
 * The core's query engine over these columns (records in timeline order, as
 * snapshot() hands them out). It owns an instance of its own, so its memory
 * goes when the returned function is dropped.
 */
export function queryColumns(snap: NativeSnapshot): QueryStep {
  const c = newInstance();
  let handle: number;
  try {
    const [ptr, size] = encode(c, snap, new Set());
    handle = c.hs_query_open(ptr, size);
  } catch (e) {
    if (e instanceof Error && e.constructor.name === 'RuntimeError') throw tooLarge(snap.count, e);
    throw e;
  }
  if (handle === 0) throw new Error(`hotspan: the WebAssembly core rejected its input (${STATUS_TEXT[1]})`);
  const argsPtr = c.hs_alloc(8 * QUERY_ARGS);
  return (name, args) => {
    let namePtr = 0;
    let nameBytes = NO_NAME;
    if (name !== undefined) {
      const utf8 = encoder.encode(name);
      namePtr = c.hs_alloc(utf8.length);
      new Uint8Array(c.memory.buffer, namePtr, utf8.length).set(utf8);
      nameBytes = utf8.length;
    }
    new Float64Array(c.memory.buffer, argsPtr, QUERY_ARGS).set(args);
    const status = c.hs_query(handle, argsPtr, namePtr, nameBytes);
    if (namePtr !== 0) c.hs_free(namePtr);
    if (status !== 0) throw new RangeError('hotspan: query arguments rejected by the core');
    const bytes = new Uint8Array(c.memory.buffer, c.hs_result_data(), c.hs_result_size()).slice(); // aligned for f64
    return new Float64Array(bytes.buffer);
  };
}

/** native/wasm/exports.cc hs_span_ids: u64 per stored context in, per record out. */
export const CONTEXT_WORDS = 6;
const IDS_WORDS = 5;

/** The columns' stored contexts as hs_span_ids and hs_otlp_next take them: CONTEXT_WORDS u64 each. */
export function putContexts(words: BigUint64Array, snap: NativeSnapshot): void {
  let w = 0;
  for (const [i, ctx] of snap.contexts ?? []) {
    words[w++] = BigInt(snap.fields[i * FIELDS_PER_RECORD + FIELD_TIMELINE]);
    words[w++] = BigInt(snap.fields[i * FIELDS_PER_RECORD + FIELD_LOCAL]);
    words[w++] = ctx.traceHi;
    words[w++] = ctx.traceLo;
    words[w++] = ctx.parentWire;
    words[w++] = BigInt(ctx.flags);
  }
}

/**
 * The W3C ids of every record of these columns (native/core/record/span_ids.h,
 * through the WebAssembly core): 5 u64 per record in input order [trace hi,
 * trace lo, span id, parent span id, flags | resolved << 8 | (k + 1) << 32
 * when the record's trace comes from snap.contexts[k]], with the ids of the
 * tracer whose salt is `salt`. The core's one resolver, so the ids are
 * those the native backend derives for the same records.
 */
export function spanIdsOfColumns(snap: NativeSnapshot, salt: bigint, sampler = 0n): BigUint64Array {
  const n = snap.count;
  const contexts = snap.contexts ?? [];
  const bytes = run(snap, new Set(), (c, ptr, size) => {
    let at = 0;
    if (contexts.length > 0) {
      at = c.hs_alloc(8 * CONTEXT_WORDS * contexts.length);
      putContexts(new BigUint64Array(c.memory.buffer, at, CONTEXT_WORDS * contexts.length), snap);
    }
    return c.hs_span_ids(ptr, size, at, contexts.length, BigInt.asIntN(64, salt), BigInt.asIntN(64, sampler));
  }).slice(); // aligned for u64
  const out = new BigUint64Array(bytes.buffer);
  // The core answers timeline after timeline (the columns' timeline order),
  // each timeline's records in input order: back to input order.
  const slot = new Map<number, number>();
  snap.timelines.forEach((t, k) => slot.set(t.id, k));
  const per = new Uint32Array(snap.timelines.length + 1);
  for (let i = 0; i < n; i++) per[(slot.get(snap.fields[i * FIELDS_PER_RECORD + FIELD_TIMELINE]) ?? 0) + 1]++;
  for (let k = 1; k < per.length; k++) per[k] += per[k - 1];
  const ids = new BigUint64Array(IDS_WORDS * n);
  for (let i = 0; i < n; i++) {
    const j = per[slot.get(snap.fields[i * FIELDS_PER_RECORD + FIELD_TIMELINE]) ?? 0]++;
    ids.set(out.subarray(IDS_WORDS * j, IDS_WORDS * (j + 1)), IDS_WORDS * i);
  }
  return ids;
}

// A u64 view of the kept instance's memory, made again when the memory grew
// (the old buffer then still has the old length): rootIds builds no view per call.
let words64: BigUint64Array | undefined;
function memoryWords(c: Exports): BigUint64Array {
  const buf = c.memory.buffer;
  if (words64 === undefined || words64.buffer !== buf) words64 = new BigUint64Array(buf);
  return words64;
}

/** Copies the result's first `n` u64s into `out` (the result is 8-byte aligned: heap-allocated, n > 1). */
function resultInto(c: Exports, out: BigUint64Array, n: number): void {
  const at = c.hs_result_data();
  const w = memoryWords(c);
  for (let k = 0; k < n; k++) out[k] = w[at / 8 + k];
}

/** [wire span id, trace hi, trace lo, trace flags] of tracer-wide span id `span` as a root (native/core/record/trace_id.h, sampler.h). */
export function rootIds(span: number, salt: bigint, sampler: bigint): BigUint64Array {
  const c = instance();
  c.hs_root_ids(BigInt(span), BigInt.asIntN(64, salt), BigInt.asIntN(64, sampler));
  const out = new BigUint64Array(4);
  resultInto(c, out, 4);
  return out;
}

/** The core's stats rows for these columns, as the addon reports them. */
export function statsOfColumns(snap: NativeSnapshot): NativeStatsRow[] {
  const bytes = run(snap, new Set(), (c, ptr, size) => c.hs_stats(ptr, size)).slice(); // aligned for f64
  const v = new Float64Array(bytes.buffer);
  const rows: NativeStatsRow[] = [];
  for (let i = 0; i < v.length; i += STATS_ROW_DOUBLES) {
    rows.push({
      name: snap.names[v[i]] ?? '?',
      count: v[i + 1],
      totalNs: v[i + 2],
      minNs: v[i + 3],
      maxNs: v[i + 4],
      meanNs: v[i + 5],
      p50Ns: v[i + 6],
      p90Ns: v[i + 7],
      p99Ns: v[i + 8],
    });
  }
  return rows;
}

/**
 * One document written in batches by the core's incremental writers
 * (PerfettoWriter, ChromeJsonWriter through hs_writer_*), so a document of
 * any length is made in bounded memory. Each call returns the bytes it
 * wrote, a view into the module's memory valid until the next call into the
 * module: write them out (or copy them) first.
 */
export class WasmDocumentWriter {
  /** The instance the document lives in, whatever later calls do with the kept one. */
  private readonly c: Exports;
  private handle: number;

  /** `clocks` and `originNs` as for writeColumns. */
  constructor(format: keyof typeof FORMAT_CODES, clocks: ClockReadings, originNs: bigint) {
    this.c = instance();
    const { monotonicNs, realtimeNs, boottimeNs = -1n } = clocks;
    this.handle = this.c.hs_writer_begin(FORMAT_CODES[format], originNs, monotonicNs, realtimeNs, boottimeNs);
    if (this.handle === 0) throw new RangeError(`hotspan: unknown document format ${String(format)}`);
  }

  /**
   * One batch: the records' timelines (described on first sight), their
   * records in end order per timeline, and in `names` only the names new
   * since the previous batch (their ids follow on from those).
   */
  append(batch: NativeSnapshot, serial: ReadonlySet<number>): Uint8Array {
    return this.call(batch.count, () => {
      const [ptr, size] = encode(this.c, batch, serial);
      return this.c.hs_writer_append(this.handle, ptr, size);
    });
  }

  /**
   * The process of the batches appended next (its pid, and its name; '': the
   * writers' default): a document may hold several, each kept apart
   * (native/core/write/document_writer.h, set_process).
   */
  process(pid: number, name: string): void {
    this.call(0, () => {
      const [at, size] = utf8In(this.c, name);
      return this.c.hs_writer_process(this.handle, pid, at, size);
    });
  }

  /** The document's last bytes; the writer is done. */
  finish(): Uint8Array {
    const bytes = this.call(0, () => this.c.hs_writer_finish(this.handle));
    this.handle = 0;
    if (kept === this.c && this.c.memory.buffer.byteLength > KEEP_BYTES) kept = undefined;
    return bytes;
  }

  private call(records: number, op: () => number): Uint8Array {
    if (this.handle === 0) throw new Error('hotspan: the document is already finished');
    let status: number;
    try {
      status = op();
    } catch (e) {
      if (kept === this.c) kept = undefined; // its heap may be half updated
      this.handle = 0;
      if (e instanceof Error && e.constructor.name === 'RuntimeError') throw tooLarge(records, e);
      throw e;
    }
    if (status !== 0) throw new Error(`hotspan: the WebAssembly core rejected its input (${STATUS_TEXT[status] ?? String(status)})`);
    return new Uint8Array(this.c.memory.buffer, this.c.hs_result_data(), this.c.hs_result_size());
  }
}
