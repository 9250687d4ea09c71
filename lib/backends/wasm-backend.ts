// The js backend over the recording core compiled to WebAssembly
// (../binding/wasm-recorder): the addon's rules (stack, ids, budget, tracks,
// groups, counters, trace contexts) run in the core; this file only passes
// the clock's readings in and turns statuses into the facade's errors.
// The js backend's one engine (../tracer/backend-choice). Workers
// joined with share() record in instances of their own and hand their records
// to this one's core (./wasm-join). The head sampler and the tail keep are the
// core's (its words given at open); the OTLP export reads through the core's
// export cursor and its worker encodes with the core's batcher.

import { randomBytes } from 'node:crypto';

import { openIdsOf, type Backend, type Given, type OpenIds } from './backend';
import { calibrate, readClocks } from '../common/clock';
import { columnsView, type FrozenView } from '../read/frozen-view';
import { asyncRejectedError, closedError, depthError, MAX_DEPTH, statusError, trackKindError, traceNestingError, unknownNameError } from '../common/errors';
import { STATUS_INVALID, STATUS_OK } from '../common/flags';
import type { NativeSnapshot, NativeTracer } from '../binding/native-binding';
import { writeDocument, writeDocumentNow, type OutputFormat, type WrittenFile } from '../common/output';
import type { BackendCounts } from '../common/counts';
import type { ExportSlice, JsExportInfo } from '../otlp/otlp-export-slice';
import { statsFromNative, type StatsRow } from '../read/stats';
import { rootIds, statsOfColumns } from '../binding/wasm-core';
import { WasmRecorder, type FullPolicy as OnFull } from '../binding/wasm-recorder';
import { WasmShare } from './wasm-join';

// Read once: globalThis.performance is an accessor in Node.
const perf = performance;
/** The budget when none is given: the core clamps it to its maximum. */
const NO_LIMIT = 2 ** 40;

/** 64 random bits, never 0: the tracer's id salt, kept here too for the ids the facade derives (freeze, idsOf). */
function randomSalt(): bigint {
  for (;;) {
    const v = randomBytes(8).readBigUInt64LE();
    if (v !== 0n) return v;
  }
}

export interface WasmBackendOptions {
  threadName: string;
  memoryLimit?: number;
  onFull?: OnFull;
  /** The salt of the W3C ids (a joined thread's is its owner's); default: random. */
  idSalt?: bigint;
  /** The head sampler word (native/core/record/sampler.h); default 0n, parentbased_always_on. */
  sampler?: bigint;
  /** The tail keep word of its OTLP export (native/core/record/tail_keep.h); default 0n, none. */
  keep?: bigint;
  /** The tail keep's span names (sample.keep.names); default none. */
  keepNames?: readonly string[];
  /** The clock, ms on the performance.now() axis; default performance.now (tests drive theirs). */
  clock?: () => number;
  /** A joined thread's tracer-wide timeline id (the shared tracer's, ./share-transport); default: this tracer's own. */
  timeline?: number;
  /** The process's name in the documents it writes; default the core's, "hotspan". */
  processName?: string;
}

export class WasmBackend implements Backend {
  readonly kind = 'js' as const;
  /** Times cross as ms and are stored as ns: a reading comes back within half a ns. */
  readonly clockBoundMs = 1e-6;

  protected readonly rec: WasmRecorder;
  protected readonly thread: number;
  private readonly salt: bigint;
  private readonly limit: number;
  private readonly onFull: OnFull;
  private readonly sampler: bigint;
  private readonly keep: bigint;
  private readonly keepNames: readonly string[];
  /** Names already handed to the OTLP export (its encoder takes new ones only). */
  private exportNames = 0;
  /** Interned names by id (the core's ids), for openAsync's answer. */
  private readonly names: string[] = [];
  private readonly clock: (() => number) | undefined;
  protected closedFlag = false;
  /** Owner side, once share() was called. */
  private shared: WasmShare | undefined;

  constructor(options: WasmBackendOptions) {
    this.salt = options.idSalt ?? randomSalt();
    this.limit = options.memoryLimit ?? NO_LIMIT;
    this.onFull = options.onFull ?? 'overwrite';
    this.sampler = options.sampler ?? 0n;
    this.keep = options.keep ?? 0n;
    this.keepNames = options.keepNames ?? [];
    this.clock = options.clock;
    this.rec = new WasmRecorder({ memoryLimit: this.limit, onFull: this.onFull, originNs: calibrate().originNs, idSalt: this.salt, sampler: this.sampler, keep: this.keep, keepNames: this.keepNames, processName: options.processName });
    this.thread = this.rec.thread(options.threadName, options.timeline ?? 0);
    if (this.thread === 0) throw new Error(`hotspan: the core refused timeline id ${String(options.timeline ?? 0)} for thread '${options.threadName}'`);
  }

  now(): number {
    return this.clock === undefined ? perf.now() : this.clock();
  }

  // ---- hot path ----

  begin(nameId: number): void {
    const s = this.rec.begin(this.thread, nameId, this.now());
    if (s !== STATUS_OK) throw this.beginError(s, nameId);
  }

  /** The core answers Invalid both for an unknown name and for a full stack. */
  private beginError(s: number, nameId: number): Error {
    if (this.closedFlag) return closedError();
    if (s !== STATUS_INVALID) return statusError(s, 'begin()');
    return this.openDepth() >= MAX_DEPTH ? depthError() : unknownNameError(nameId);
  }

  beginAttrs(nameId: number, attrsJson: string): void {
    const t = this.now();
    const s = attrsJson === '' ? this.rec.begin(this.thread, nameId, t) : this.rec.beginAttrs(this.thread, nameId, t, attrsJson);
    if (s !== STATUS_OK) throw this.beginError(s, nameId);
  }

  beginValues(_nameId: number, _attrs: unknown): boolean {
    return false;
  }

  beginDepth(nameId: number): number {
    this.begin(nameId);
    return this.rec.depth(this.thread);
  }

  endAt(depth: number, flags: number, name: number | string): void {
    const t = this.now();
    const open = this.rec.depth(this.thread);
    if (open !== depth && !this.closedFlag) throw traceNestingError(name, open, depth);
    this.endWith(t, flags);
  }

  end(): void {
    this.endWith(this.now(), 0);
  }

  endFlags(flags: number): void {
    this.endWith(this.now(), flags);
  }

  private endWith(t: number, flags: number): void {
    const s = this.rec.end(this.thread, t, flags & 0xffff);
    if (s !== STATUS_OK) throw statusError(s, 'end()');
  }

  intern(name: string): number {
    if (this.closedFlag) throw closedError();
    const id = this.rec.intern(name);
    this.names[id] = name;
    return id;
  }

  openDepth(): number {
    return this.rec.depth(this.thread);
  }

  innermost(): number {
    return this.rec.innermost(this.thread);
  }

  lastBegun(): number {
    return -1;
  }

  // ---- async spans, tracks, groups ----

  track(name: string, serial: boolean): number {
    if (this.closedFlag) throw closedError();
    const id = this.shared === undefined ? this.rec.track(name, serial) : this.shared.track(name, serial);
    if (id === 0) throw trackKindError(name, !serial);
    return id;
  }

  asyncBegin(track: number, nameId: number, attrsJson: string): number {
    if (this.closedFlag) throw closedError();
    const token = this.rec.asyncBegin(track, nameId, this.now(), attrsJson);
    if (token === 0n) throw asyncRejectedError(track, nameId);
    return Number(token);
  }

  asyncBeginValues(_track: number, _nameId: number, _attrs: unknown): number {
    return 0;
  }

  asyncEnd(token: number, flags: number): number {
    return this.rec.asyncEnd(BigInt(token), this.now(), flags & 0xffff);
  }

  openAsync(): Array<[number, string]> {
    return this.rec.openAsync().map(([token, name]) => [Number(token), this.names[name] ?? '?']);
  }

  groupBegin(nameId: number, attrsJson: string): void {
    const s = this.rec.groupBegin(nameId, this.now(), attrsJson);
    if (s !== STATUS_OK) throw this.closedFlag ? closedError() : s === STATUS_INVALID ? unknownNameError(nameId) : statusError(s, 'groupBegin()', 'group');
  }

  groupEnd(): void {
    const s = this.rec.groupEnd(this.now());
    if (s !== STATUS_OK) throw statusError(s, 'groupEnd()', 'group');
  }

  openGroups(): number {
    return this.rec.openGroups();
  }

  counter(name: string, value: number): void {
    const s = this.rec.counter(name, this.now(), value);
    if (s !== STATUS_OK) throw statusError(s, 'counter()');
  }

  // ---- finalization and reading: the core flushes before each read ----

  flush(): void {
    this.shared?.hub.drain();
  }

  pending(): number {
    return 0;
  }

  lost(): number {
    return this.shared?.hub.state.lost() ?? 0;
  }

  snapshot(): NativeSnapshot {
    return this.rec.snapshot();
  }

  freeze(): FrozenView {
    return columnsView(this.snapshot(), this.salt, this.sampler);
  }

  stats(): readonly StatsRow[] {
    return statsFromNative(statsOfColumns(this.snapshot()));
  }

  counts(): BackendCounts {
    const timelines = this.rec.timelines();
    return { lost: timelines.some((t) => t.overwritten + t.dropped > 0), limit: this.limit, onFull: this.onFull, timelines };
  }

  chromeJson(): Uint8Array {
    return this.rec.write('json', readClocks());
  }

  perfetto(): Uint8Array {
    return this.rec.write('perfetto', readClocks());
  }

  /** What the document just made holds: the records the core wrote (a sampling tracer's kept traces only). */
  private contents(): { spans: number; timelines: number } {
    return { spans: this.rec.written(), timelines: this.rec.timelines().length };
  }

  writeFile(path: string, format: OutputFormat): Promise<WrittenFile> {
    return writeDocument(this, path, format, () => this.contents());
  }

  writeFileNow(path: string, format: OutputFormat): WrittenFile {
    return writeDocumentNow(this, path, format, () => this.contents());
  }

  // ---- trace context: the core stores the given context and derives the ids ----

  beginContext(nameId: number, attrsJson: string, given: Given): void {
    const s = this.rec.beginContext(this.thread, nameId, this.now(), attrsJson, given);
    if (s !== STATUS_OK) throw this.beginError(s, nameId);
  }

  asyncBeginContext(track: number, nameId: number, attrsJson: string, given: Given): number {
    if (this.closedFlag) throw closedError();
    const token = this.rec.asyncBeginContext(track, nameId, this.now(), attrsJson, given);
    if (token === 0n) throw asyncRejectedError(track, nameId);
    return Number(token);
  }

  asyncFinish(token: number, flags: number, startMs: number, endMs: number, nameId: number, attrsJson?: string): number {
    return this.rec.asyncFinish(BigInt(token), this.now(), flags & 0xffff, startMs, endMs, nameId, attrsJson);
  }

  openIds(): OpenIds | undefined {
    return openIdsOf(this.rec.openIds(this.thread));
  }

  idsOf(span: number): BigUint64Array {
    if (!(span >= 1 && span <= Number.MAX_SAFE_INTEGER) || Math.floor(span) !== span) {
      throw new RangeError(`hotspan: span must be a span id, got ${String(span)}`);
    }
    return rootIds(span, this.salt, this.sampler);
  }

  // ---- the OTLP export (lib/otlp/otlp-exporter.ts): the core's export cursor ----

  /** @internal What the exporter's worker needs: the id salt, the sampler and keep words, the time axis on the Unix epoch; opens the core's export read. */
  exportInfo(): JsExportInfo {
    if (this.closedFlag) throw closedError();
    this.rec.exportOpen();
    const clocks = readClocks();
    return { salt: this.salt, sampler: this.sampler, keep: this.keep, keepNames: [...this.keepNames], unixOffsetNs: clocks.realtimeNs - clocks.monotonicNs + calibrate().originNs };
  }

  /** @internal Up to `max` records not handed over yet, those lost before, those left (names: only the new ones). */
  takeForExport(max: number): ExportSlice {
    const { snap, lost, left, readThroughMs } = this.rec.exportTake(max);
    const names = snap.names.slice(this.exportNames);
    this.exportNames = Math.max(this.exportNames, snap.names.length);
    return { snap: { ...snap, names }, lost, left, readThroughMs };
  }

  /** @internal The exporter stopped: the budget no longer keeps records for it. */
  endExport(): void {
    this.rec.exportClose();
  }

  // ---- workers (./wasm-join) ----

  share(): string {
    if (this.closedFlag) throw closedError();
    if (this.clock !== undefined) {
      throw new Error(
        'hotspan: share() is not supported on a js tracer with an injected clock: ' +
          "a worker's spans are stamped with performance.now() and could not be placed on that clock",
      );
    }
    this.shared ??= new WasmShare(this.rec, this.salt, this.sampler);
    return this.shared.hub.token;
  }

  settleJoined(deadline: number): Promise<string[]> {
    return this.shared === undefined ? Promise.resolve([]) : this.shared.hub.settle(deadline);
  }

  collectJoined(): void {
    this.shared?.hub.collectAtExit();
  }

  nativeApi(): unknown {
    throw new Error('hotspan: nativeApi() needs the native backend; this tracer runs the js backend');
  }

  native(): NativeTracer | undefined {
    return undefined;
  }

  close(): void {
    this.shared?.hub.close();
    this.closedFlag = true;
    this.rec.close();
  }
}
