// The native backend: a thin layer over one NativeTracer (one tracer as seen
// from this env). Hot calls go straight to the native functions; status codes
// become the facade's errors only on the failure branch.

import { AttrShapes } from '../attrs/attr-shapes';
import { AttrValueIds, hasArguments } from '../attrs/attr-value-ids';
import { openIdsOf, type Backend, type CpuSamples, type Given, type OpenIds } from './backend';
import { tracestateMap, type FrozenView } from '../read/frozen-view';
import { asyncRejectedError, closedError, depthError, trackKindError, MAX_DEPTH, statusError, traceNestingError, unknownNameError } from '../common/errors';
import { TAG_LOCAL_ARGS, TAG_LOCAL_VALUES, TAG_NAME_ARGS, TAG_NAME_VIEW, TAG_TOKEN_ARGS, type NativeSnapshot, type NativeTracer } from '../binding/native-binding';
import { spanId, STATUS_INVALID, STATUS_NO_OPEN_SPAN, STATUS_OK } from '../common/flags';
import type { OutputFormat, WrittenFile } from '../common/output';
import type { BackendCounts } from '../common/counts';
import { statsFromNative, type StatsRow } from '../read/stats';

/** beginSlots' answer for a value with no slot form (native/addon/attr_values.h kRefused). */
const SLOTS_REFUSED = -1;

// The async view's entries (native/addon/async_args.h AsyncArgs::Index).
const ASYNC_TRACK = 0;
const ASYNC_NAME = 1;
const ASYNC_TOKEN = 2;
const ASYNC_FLAGS = 3;
const ASYNC_LOCAL = 4;

export class NativeBackend implements Backend {
  readonly kind = 'native' as const;
  /**
   * [0]: open-span depth, [3]: last local id of this thread, live; [4]: the
   * name id or tag begin() reads (NativeTracer.stateView).
   */
  private readonly state: Uint32Array | undefined;
  // nt's two per-span functions as fields of this object, so a span loads
  // them without loading nt first (the addon ignores the receiver).
  private readonly beginFn: NativeTracer['begin'];
  private readonly endFn: NativeTracer['end'];
  private readonly shapes: AttrShapes;
  private readonly ids: AttrValueIds;
  /** The addon's slot view (attr-value-ids.ts), undefined where external buffers are refused. */
  private readonly view: Float64Array | undefined;
  /**
   * [track, nameId, token, flags] of the next asyncBegin()/asyncEnd() view form
   * call and [4] the begin's answer (native/addon/async_args.h), or
   * undefined: then they are arguments.
   */
  private readonly asyncArgs: Float64Array | undefined;
  // As beginFn: the async calls, loaded without nt.
  private readonly asyncBeginFn: NativeTracer['asyncBegin'];
  private readonly asyncEndFn: NativeTracer['asyncEnd'];

  /**
   * @param nt the env's NativeTracer
   * @param clockBoundMs the calibration bound of this env's clock origin
   * @param owner false for a tracer joined from another env: close() then
   *   only detaches this facade and leaves the shared tracer open
   */
  constructor(
    private readonly nt: NativeTracer,
    readonly clockBoundMs: number,
    private readonly owner: boolean,
  ) {
    this.state = nt.stateView();
    this.view = nt.slotView();
    this.ids = new AttrValueIds((value) => nt.defineValue(value), this.view);
    this.shapes = new AttrShapes((keys) => nt.defineShape(keys), this.ids);
    this.asyncArgs = nt.asyncView();
    this.beginFn = nt.begin;
    this.endFn = nt.end;
    // After the plain span's fields, which stay among the first (in-object) ones.
    this.asyncBeginFn = nt.asyncBegin;
    this.asyncEndFn = nt.asyncEnd;
  }

  // The facade passes only checked uint32 ids (Tracer.begin), so the id can
  // cross through the state view: begin() then reads no argument. An id at
  // or above the tags is no name: it crosses as an argument, to be refused.
  begin(nameId: number): void {
    const v = this.state;
    let s;
    if (v !== undefined && nameId < TAG_NAME_ARGS) {
      v[4] = nameId;
      s = this.beginFn();
    } else {
      this.argsTag();
      s = this.nt.begin(nameId);
    }
    if (s !== undefined) throw this.beginError(s, nameId);
  }

  /** The next begin() or end() reads its arguments (span_calls.h); without the state view it always does. */
  private argsTag(): void {
    const v = this.state;
    if (v !== undefined) v[4] = TAG_NAME_ARGS;
  }

  beginAttrs(nameId: number, attrsJson: string): void {
    this.argsTag();
    const s = this.nt.begin(nameId, attrsJson);
    if (s !== STATUS_OK) throw this.beginError(s, nameId);
  }

  beginValues(nameId: number, attrs: unknown): boolean {
    const code = this.shapes.of(attrs);
    if (code < 0) return false;
    let s: number | undefined;
    const st = this.state;
    if (st !== undefined && this.ids.inView(nameId, code)) {
      st[4] = TAG_NAME_VIEW;
      s = this.nt.begin();
    } else {
      const v = this.shapes.args;
      this.argsTag();
      s = this.nt.begin(nameId, code, v[0], v[1], v[2], v[3]);
    }
    if (s === undefined) return true;
    if (s === SLOTS_REFUSED) return false;
    throw this.beginError(s, nameId);
  }

  // trace() costs what begin/end cost: the depth is read from the state
  // view, and the addon's endAt (arguments to read) runs only when the
  // depth is not the span's, to decide without changing anything.
  beginDepth(nameId: number): number {
    this.begin(nameId);
    return this.openDepth();
  }

  endAt(depth: number, flags: number, name: number | string): void {
    let s;
    if (this.openDepth() !== depth) {
      this.argsTag();
      s = this.nt.end(depth, flags);
    } else if (flags === 0) {
      s = this.endFn();
    } else {
      this.argsTag();
      s = this.nt.end(flags);
    }
    if (s === undefined) return;
    const open = this.nt.openDepth();
    throw s === STATUS_NO_OPEN_SPAN && open !== depth ? traceNestingError(name, open, depth) : statusError(s, 'end()');
  }

  /** The core answers Invalid both for an unknown name and for a full stack. */
  private beginError(s: number, nameId: number): Error {
    if (s !== STATUS_INVALID) return statusError(s, 'begin()');
    return this.nt.openDepth() >= MAX_DEPTH ? depthError() : unknownNameError(nameId);
  }

  // The addon returns undefined when the span ended: nothing is built on
  // the common path.
  end(): void {
    const s = this.endFn();
    if (s !== undefined) throw statusError(s, 'end()');
  }

  endFlags(flags: number): void {
    this.argsTag();
    const s = this.nt.end(flags);
    if (s !== undefined) throw statusError(s, 'end()');
  }

  intern(name: string): number {
    if (this.nt.closed()) throw closedError();
    return this.nt.intern(name);
  }

  openDepth(): number {
    const v = this.state;
    return v !== undefined ? v[0] : this.nt.openDepth();
  }

  innermost(): number {
    return this.nt.innermost();
  }

  lastBegun(): number {
    const v = this.state;
    return v !== undefined ? v[3] : -1;
  }

  now(): number {
    return performance.now();
  }

  track(name: string, serial: boolean): number {
    const id = this.nt.track(name, serial);
    if (id === 0) throw this.nt.closed() ? closedError() : trackKindError(name, !serial);
    return id;
  }

  /** A concurrent track whose timeline is named `name` itself, not "track: <name>" (hotspan/auto's, lib/auto/auto-file.ts). */
  namedTrack(name: string): number {
    const id = this.nt.track(name, false, true);
    if (id === 0) throw this.nt.closed() ? closedError() : trackKindError(name, true);
    return id;
  }

  // The async begins answer the token's local id (a small integer, so no heap
  // number per span in the addon, hot_path.h TokenValue); the token is the
  // span id of that local id on the track.
  asyncBegin(track: number, nameId: number, attrsJson: string): number {
    const a = this.asyncArgs;
    let local: number;
    if (attrsJson !== '') {
      if (a !== undefined) a[ASYNC_LOCAL] = TAG_LOCAL_ARGS;
      local = this.nt.asyncBegin(track, nameId, attrsJson);
    } else if (a !== undefined) {
      // The last answer in [4] is the tag of this form: nothing to write.
      a[ASYNC_TRACK] = track;
      a[ASYNC_NAME] = nameId;
      this.asyncBeginFn();
      local = a[ASYNC_LOCAL];
    } else {
      // No attributes: no argument for the addon to read.
      local = this.nt.asyncBegin(track, nameId);
    }
    if (local === 0) {
      if (this.nt.closed()) throw closedError();
      throw asyncRejectedError(track, nameId);
    }
    return spanId(track, local);
  }

  asyncBeginValues(track: number, nameId: number, attrs: unknown): number {
    const code = this.shapes.of(attrs);
    if (code < 0) return 0;
    const a = this.asyncArgs;
    let local: number;
    if (a !== undefined && this.ids.inView(nameId, code)) {
      // Every number in the views: no argument for the addon to read.
      a[ASYNC_TRACK] = track;
      a[ASYNC_NAME] = nameId;
      a[ASYNC_LOCAL] = TAG_LOCAL_VALUES;
      this.nt.asyncBegin();
      local = a[ASYNC_LOCAL];
    } else {
      const v = this.shapes.args;
      if (a !== undefined) a[ASYNC_LOCAL] = TAG_LOCAL_ARGS;
      local = !hasArguments(code)
        ? this.nt.asyncBegin(track, nameId, code)
        : this.nt.asyncBegin(track, nameId, code, v[0], v[1], v[2], v[3]);
    }
    // 0 (closed, unknown track or name) too: asyncBegin throws the error.
    return local > 0 ? spanId(track, local) : 0;
  }

  asyncEnd(token: number, flags: number): number {
    const a = this.asyncArgs;
    if (a === undefined) return this.nt.asyncEnd(token, flags) ?? STATUS_OK;
    // A token equal to the tag is no token either way: the view answers so.
    a[ASYNC_TOKEN] = token;
    a[ASYNC_FLAGS] = flags;
    return this.asyncEndFn() ?? STATUS_OK;
  }

  openAsync(): Array<[number, string]> {
    return this.nt.openAsync();
  }

  counter(name: string, value: number): void {
    const s = this.nt.counter(name, value);
    if (s !== STATUS_OK) throw statusError(s, `counter("${name}")`);
  }

  cpuProfile(s: CpuSamples): void {
    const st = this.nt.cpuProfile(s.functions, s.urls, s.lines, s.nodeFrame, s.nodeParent, s.sampleNode, s.sampleUs);
    if (st !== STATUS_OK) throw statusError(st, 'cpuProfile()');
  }

  profileInterval(intervalUs?: number): number {
    return intervalUs === undefined ? this.nt.profileInterval() : this.nt.profileInterval(intervalUs);
  }

  groupBegin(nameId: number, attrsJson: string): void {
    const s = this.nt.groupBegin(nameId, attrsJson);
    if (s !== STATUS_OK) throw s === STATUS_INVALID ? unknownNameError(nameId) : statusError(s, 'groupBegin()');
  }

  groupEnd(): void {
    const s = this.nt.groupEnd();
    if (s !== STATUS_OK) throw statusError(s, 'groupEnd()', 'group');
  }

  openGroups(): number {
    return this.nt.openGroups();
  }

  flush(): void {
    this.nt.flush();
  }

  lost(): number {
    return 0;
  }

  pending(): number {
    return this.nt.pending();
  }

  snapshot(): NativeSnapshot {
    return this.nt.snapshot();
  }

  freeze(): FrozenView {
    const nt = this.nt;
    const view = nt.freeze();
    return {
      count: view.count,
      read: (offset, limit) => nt.read(view, offset, limit),
      readAt: (indices) => nt.readAt(view, indices),
      query: (name, args) => nt.query(view, name, args),
      spanIds: () => nt.spanIds(view),
      spanTracestates: () => tracestateMap(nt.spanTracestates(view)),
    };
  }

  stats(): readonly StatsRow[] {
    return statsFromNative(this.nt.stats());
  }

  counts(): BackendCounts {
    return this.nt.counts();
  }

  chromeJson(): Uint8Array {
    return this.nt.chromeJson();
  }

  perfetto(): Uint8Array {
    return this.nt.perfetto();
  }

  writeFile(path: string, format: OutputFormat): Promise<WrittenFile> {
    return this.nt.writeFile(path, format);
  }

  writeFileNow(path: string, format: OutputFormat): WrittenFile {
    return this.nt.writeFileNow(path, format);
  }

  /** writeFileNow, the file's counts adding `dropped` records produced and dropped outside the tracer (hotspan/auto's). */
  writeFileNowDropped(path: string, format: OutputFormat, dropped: number): WrittenFile {
    return this.nt.writeFileNow(path, format, dropped);
  }

  share(): string {
    if (this.nt.closed()) throw closedError();
    return this.nt.shareToken();
  }

  beginContext(nameId: number, attrsJson: string, given: Given): void {
    this.argsTag();
    const s = this.nt.begin(nameId, attrsJson, given.ids, given.flags, given.tracestate);
    if (s !== STATUS_OK) throw this.beginError(s, nameId);
  }

  asyncBeginContext(track: number, nameId: number, attrsJson: string, given: Given): number {
    const a = this.asyncArgs;
    if (a !== undefined) a[ASYNC_LOCAL] = TAG_LOCAL_ARGS;
    const local = this.nt.asyncBegin(track, nameId, attrsJson, given.ids, given.flags, given.tracestate);
    if (local === 0) {
      if (this.nt.closed()) throw closedError();
      throw asyncRejectedError(track, nameId);
    }
    return spanId(track, local);
  }

  asyncFinish(token: number, flags: number, startMs: number, endMs: number, nameId: number, attrsJson?: string): number {
    const a = this.asyncArgs;
    if (a !== undefined) a[ASYNC_TOKEN] = TAG_TOKEN_ARGS;
    return this.nt.asyncEnd(token, flags, startMs, endMs, nameId, attrsJson);
  }

  openIds(): OpenIds | undefined {
    return openIdsOf(this.nt.openIds());
  }

  idsOf(span: number): BigUint64Array {
    return this.nt.idsOf(span);
  }

  nativeApi(): unknown {
    if (this.nt.closed()) throw closedError();
    return this.nt.nativeApi();
  }

  native(): NativeTracer | undefined {
    return this.nt;
  }

  close(): void {
    if (this.owner) {
      this.nt.close();
    } else {
      // A joined env: publish what this thread recorded, keep the tracer open.
      this.nt.flush();
    }
  }
}
