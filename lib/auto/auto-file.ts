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

import type { AutoRecorder, AutoSpan } from './auto-record';
import { withAutoSpans } from './auto-record';
import type { Backend, Given } from '../backends/backend';
import { calibrate, readClocks } from '../common/clock';
import { totalCounts } from '../common/counts';
import { FLAG_ERROR } from '../common/flags';
import { NativeBackend } from '../backends/native-backend';
import type { OutputFormat } from '../common/output';
import { writeColumns } from '../binding/wasm-core';

/**
 * Adds the recorder's spans to a native backend as async spans, each parent
 * before its children, on tracks named as the recorder names them ("http
 * server", not "track: http server": the file reads as the js backend's
 * does). Incremental (a checkpoint adds what ended since the last one): a
 * span waits while an ancestor is still open, so it is added under the
 * parent it will have in the end.
 *
 * The recorder's times are this process's performance.now() (ms from its own
 * origin); the tracer's axis starts at the run's shared origin (the first
 * traced process's: lib/auto/auto-out.ts). `shiftMs`, own origin minus the
 * shared one, moves them onto it (0 in the first process).
 */
export class SpanAdder {
  private readonly inTrace = new Set<AutoSpan>();
  private readonly tracks = new Map<string, number>();
  private readonly begun = new Map<AutoSpan, number>();
  private seen = 0;
  private waiting: AutoSpan[] = [];

  constructor(
    private readonly b: NativeBackend,
    private readonly shiftMs = 0,
  ) {}

  /** Adds the spans ended since the last call; `final`: also those under a span still open. */
  add(rec: AutoRecorder, final: boolean): void {
    const fresh = rec.spans.slice(this.seen);
    this.seen = rec.spans.length;
    for (const s of fresh) this.inTrace.add(s);
    const candidates = [...this.waiting, ...fresh].sort((x, y) => x.start - y.start);
    this.waiting = [];
    for (const s of candidates) {
      if (!final && this.underOpen(s)) this.waiting.push(s);
      else this.begin(s);
    }
  }

  /** An ancestor of `s` has not ended yet (it may still come into the trace). */
  private underOpen(s: AutoSpan): boolean {
    for (let up = s.parent; up !== undefined; up = up.parent) if (Number.isNaN(up.end)) return true;
    return false;
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
    (adder ?? new SpanAdder(b)).add(rec, true);
    b.flush();
    b.writeFileNowDropped(path, format, rec.dropped);
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
