// The file hotspan/auto writes at exit (lib/auto.ts).
//
// On the native backend the recorder's spans (lib/auto/auto-record.ts) are added
// to the automatic tracer itself, as async spans on one track per kind with
// their own start, end, attributes and parents (asyncBegin / asyncFinish), and
// the tracer's trace is then streamed into the file block by block
// (writeFileNow), as writeOnExit does: the write never holds the whole
// document, so a program under a memory cap is not killed at exit. The spans
// go through the tracer's memory budget like its own (a full budget drops or
// overwrites, and counts it). The file's counts are the tracer's, which now
// include the recorder's spans, plus the spans the recorder dropped past its
// limit (produced and dropped).
//
// On the js and noop backends (and a tracer the program closed) the document
// is built whole from the snapshot with the spans added (withAutoSpans), as
// those backends' own writes are.

import { writeFileSync } from 'node:fs';

import { MAX_SPANS, type AutoRecorder, type AutoSpan, type SpanTaker } from './auto-record';
import type { Backend, Given } from '../backends/backend';
import { calibrate, readClocks } from '../common/clock';
import { totalCounts } from '../common/counts';
import {
  FIELDS_PER_RECORD,
  FIELD_DEPTH_FLAGS,
  FIELD_LOCAL,
  FIELD_NAME,
  FIELD_PARENT_LOCAL,
  FIELD_PARENT_TIMELINE,
  FIELD_TIMELINE,
  FLAG_ASYNC,
  FLAG_ATTRS,
  FLAG_ERROR,
} from '../common/flags';
import type { NativeSnapshot } from '../binding/native-binding';
import { NativeBackend } from '../backends/native-backend';
import type { OutputFormat } from '../common/output';
import { writeColumns } from '../binding/wasm-core';

/**
 * Adds the recorder's spans to a native backend as async spans as they end
 * (the recorder's SpanTaker), each parent before its children, on tracks
 * named as the recorder names them ("http server", not "track: http server":
 * the file reads as the js backend's does). A span is in the tracer's budget
 * from then on, not held here as an object until the trace is written: only
 * a span under an ancestor still open waits (bounded, overflow counted by the
 * recorder), so it is added under the parent it will have in the end, until
 * that ancestor ends (or the trace is written: add()).
 *
 * The recorder's times are this process's performance.now() (ms from its own
 * origin); the tracer's axis starts at the run's shared origin (the first
 * traced process's: lib/auto/auto-out.ts). `shiftMs`, own origin minus the
 * shared one, moves them onto it (0 in the first process).
 */
export class SpanAdder implements SpanTaker {
  /** Ended spans in the trace (a parent not in it gives way to its own parent). */
  private readonly inTrace = new WeakSet<AutoSpan>();
  private readonly tracks = new Map<string, number>();
  /** Each added span's token, for its children to come (a span is kept alive by its children only). */
  private readonly begun = new WeakMap<AutoSpan, number>();
  /** The spans waiting for an open ancestor, by that ancestor (the nearest). */
  private readonly waiting = new Map<AutoSpan, AutoSpan[]>();
  private waitingCount = 0;
  /** Spans that could not be added (the program closed the tracer): the file counts them as dropped. */
  lost = 0;

  constructor(
    private readonly b: NativeBackend,
    private readonly shiftMs = 0,
    private readonly maxWaiting = MAX_SPANS,
  ) {}

  take(s: AutoSpan): boolean {
    const open = this.openAncestor(s);
    if (open !== undefined && this.waitingCount >= this.maxWaiting) {
      this.release(s);
      return false;
    }
    this.inTrace.add(s);
    if (open === undefined) this.put(s);
    else this.wait(open, s);
    this.release(s);
    return true;
  }

  passed(s: AutoSpan): void {
    this.release(s);
  }

  /** Adds every span still waiting (the trace is being written: what is open stays out of it). */
  add(): void {
    const all = [...this.waiting.values()].flat().sort((x, y) => x.start - y.start);
    this.waiting.clear();
    this.waitingCount = 0;
    for (const s of all) this.put(s);
  }

  /** Adds `s`, never throwing into the program whose span ended (a closed tracer refuses it: counted in `lost`). */
  private put(s: AutoSpan): void {
    try {
      this.begin(s);
    } catch {
      this.lost++;
    }
  }

  /** `s` ended: the spans waiting for it are added, or wait for an ancestor still open above it. */
  private release(s: AutoSpan): void {
    const under = this.waiting.get(s);
    if (under === undefined) return;
    this.waiting.delete(s);
    this.waitingCount -= under.length;
    for (const w of under.sort((x, y) => x.start - y.start)) {
      const open = this.openAncestor(w);
      if (open === undefined) this.put(w);
      else this.wait(open, w);
    }
  }

  private wait(open: AutoSpan, s: AutoSpan): void {
    const list = this.waiting.get(open);
    if (list === undefined) this.waiting.set(open, [s]);
    else list.push(s);
    this.waitingCount++;
  }

  /** The nearest ancestor of `s` that has not ended yet (it may still come into the trace). */
  private openAncestor(s: AutoSpan): AutoSpan | undefined {
    for (let up = s.parent; up !== undefined; up = up.parent) if (Number.isNaN(up.end)) return up;
    return undefined;
  }

  private begin(s: AutoSpan): number {
    const b = this.b;
    const known = this.begun.get(s);
    if (known !== undefined) return known;
    // A parent that is not in the trace (a connection without the net instrument) gives way to its own parent.
    let up = s.parent;
    while (up !== undefined && !this.inTrace.has(up)) up = up.parent;
    const parent = up === undefined ? 0 : this.begin(up);
    let track = this.tracks.get(s.track);
    if (track === undefined) {
      track = b.namedTrack(s.track);
      this.tracks.set(s.track, track);
    }
    const name = b.intern(s.name);
    const attrs = Object.keys(s.attrs).length > 0 ? JSON.stringify(s.attrs) : '';
    // A parent span without a trace context (the ids' trace is 0): only the parent link is stored.
    const under: Given = { ids: new BigUint64Array([0n, 0n, 0n, BigInt(parent)]), flags: 0, tracestate: '' };
    const token = parent === 0 ? b.asyncBegin(track, name, attrs) : b.asyncBeginContext(track, name, attrs, under);
    this.begun.set(s, token);
    if (token !== 0) b.asyncFinish(token, s.error ? FLAG_ERROR : 0, s.start + this.shiftMs, s.end + this.shiftMs, -1);
    return token;
  }
}

/**
 * Writes the automatic tracer's trace with the recorder's spans to `path`, on
 * this thread. `processName`: the tracer's (TracerOptions.processName), which
 * the native backend's tracer names the file with itself.
 */
export function writeAutoFile(b: Backend, rec: AutoRecorder, path: string, format: OutputFormat, processName: string, adder?: SpanAdder): void {
  if (b instanceof NativeBackend) {
    if (adder === undefined) {
      adder = new SpanAdder(b);
      rec.handTo(adder);
    }
    adder.add();
    b.flush();
    b.writeFileNowDropped(path, format, rec.dropped + adder.lost);
    return;
  }
  // The document is formatted from the snapshot with the recorded spans added (lib/auto/auto-record.ts says why).
  const snap = withAutoSpans(b.snapshot(), rec);
  // The core's writers (WebAssembly) over those columns, on the tracer's clock, with the counts a write() file
  // carries: the tracer's own, and the recorder's spans (kept, or dropped past its limit); and the process's name.
  const own = totalCounts(b.counts());
  const counts = {
    produced: own.produced + rec.spans.length + rec.dropped,
    kept: own.kept + rec.spans.length,
    released: own.released,
    overwritten: own.overwritten,
    dropped: own.dropped + rec.dropped,
  };
  writeFileSync(path, writeColumns(snap, new Set(), format, readClocks(), calibrate().originNs, counts, processName));
}

/** The snapshot with the recorder's spans added, one async track per kind after the tracer's own timelines. */
export function withAutoSpans(snap: NativeSnapshot, rec: AutoRecorder): NativeSnapshot {
  if (rec.spans.length === 0) return snap;
  const names = [...snap.names];
  const nameIds = new Map<string, number>();
  const nameId = (n: string): number => {
    let id = nameIds.get(n);
    if (id === undefined) {
      id = names.length;
      names.push(n);
      nameIds.set(n, id);
    }
    return id;
  };
  const timelines = [...snap.timelines];
  let nextTimeline = timelines.reduce((m, t) => Math.max(m, t.id), 0) + 1;
  const trackIds = new Map<string, number>();
  const locals = new Map<number, number>();
  const spans = [...rec.spans].sort((a, b) => a.start - b.start);
  const n = snap.count + spans.length;
  const times = new Float64Array(2 * n);
  const fields = new Uint32Array(FIELDS_PER_RECORD * n);
  times.set(snap.times.subarray(0, 2 * snap.count));
  fields.set(snap.fields.subarray(0, FIELDS_PER_RECORD * snap.count));
  const attrs = [...snap.attrs];
  const where = new Map<AutoSpan, [number, number]>();
  spans.forEach((s, k) => {
    let tl = trackIds.get(s.track);
    if (tl === undefined) {
      tl = nextTimeline++;
      trackIds.set(s.track, tl);
      timelines.push({ id: tl, name: s.track, kind: 'track', exited: false });
    }
    const local = (locals.get(tl) ?? 0) + 1;
    locals.set(tl, local);
    where.set(s, [tl, local]);
    const i = snap.count + k;
    times[2 * i] = s.start;
    times[2 * i + 1] = s.end;
    const f = i * FIELDS_PER_RECORD;
    fields[f + FIELD_NAME] = nameId(s.name);
    fields[f + FIELD_TIMELINE] = tl;
    fields[f + FIELD_LOCAL] = local;
    const hasAttrs = Object.keys(s.attrs).length > 0;
    fields[f + FIELD_DEPTH_FLAGS] = FLAG_ASYNC | (s.error ? FLAG_ERROR : 0) | (hasAttrs ? FLAG_ATTRS : 0);
    if (hasAttrs) attrs.push([i, JSON.stringify(s.attrs)]);
  });
  // Parents began earlier, so they are placed already. A parent that is not
  // in the trace (a connection without the net instrument, a span past the
  // limit) gives way to its own parent.
  spans.forEach((s, k) => {
    let up = s.parent;
    while (up !== undefined && !where.has(up)) up = up.parent;
    const p = up === undefined ? undefined : where.get(up);
    if (p === undefined) return;
    const f = (snap.count + k) * FIELDS_PER_RECORD;
    fields[f + FIELD_PARENT_TIMELINE] = p[0];
    fields[f + FIELD_PARENT_LOCAL] = p[1];
  });
  return { names, timelines, count: n, times, fields, attrs, counters: snap.counters };
}
