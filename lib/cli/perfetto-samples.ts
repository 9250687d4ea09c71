// CPU samples in a Perfetto trace: TracePacket.perf_sample (pid, tid and an
// interned callstack) and the per-sequence interned tables its callstack is
// read through (function_names, source_paths, frames, callstacks). hotspan
// writes V8's samples so (native/core/write/perfetto_writer.cc); Linux perf
// profiles have the same shape. A sample's stack is resolved once per
// callstack (the report needs its top frame; the view, the whole stack).

import { ProtoReader, WIRE_LEN } from './proto';
import type { TraceFrame } from './trace-model';

/** TracePacket.perf_sample. */
export const P_PERF_SAMPLE = 66;

// InternedData fields.
const I_FUNCTION_NAMES = 5;
const I_FRAMES = 6;
const I_CALLSTACKS = 7;
const I_SOURCE_PATHS = 18;

interface FrameRef {
  functionIid: number;
  sourceIid: number;
  line: number;
}

/** One sequence's interned profiling tables, cleared with its incremental state. */
export class SampleTables {
  private readonly functionNames = new Map<number, string>();
  private readonly sourcePaths = new Map<number, string>();
  private readonly frames = new Map<number, FrameRef>();
  /** Per callstack iid, its frame iids, outermost first (frame_ids' order). */
  private readonly callstacks = new Map<number, number[]>();
  /** Per callstack iid, its frames once resolved. */
  private readonly resolved = new Map<number, readonly TraceFrame[]>();

  clear(): void {
    this.functionNames.clear();
    this.sourcePaths.clear();
    this.frames.clear();
    this.callstacks.clear();
    this.resolved.clear();
  }

  /** Reads an InternedData field if it is one of these tables; false otherwise (nothing read). */
  interned(field: number, r: ProtoReader): boolean {
    if (field === I_FUNCTION_NAMES || field === I_SOURCE_PATHS || field === I_FRAMES) this.resolved.clear(); // a stack's names may change
    switch (field) {
      case I_FUNCTION_NAMES:
        readInternedString(this.functionNames, r.sub());
        return true;
      case I_SOURCE_PATHS:
        readInternedString(this.sourcePaths, r.sub());
        return true;
      case I_FRAMES:
        this.frame(r.sub());
        return true;
      case I_CALLSTACKS:
        this.callstack(r.sub());
        return true;
      default:
        return false;
    }
  }

  private frame(r: ProtoReader): void {
    let iid = 0;
    const f: FrameRef = { functionIid: 0, sourceIid: 0, line: 0 };
    while (r.next()) {
      if (r.field === 1) iid = r.varint();
      else if (r.field === 2) f.functionIid = r.varint();
      else if (r.field === 5) f.sourceIid = r.varint();
      else if (r.field === 6) f.line = r.varint();
      else r.skip();
    }
    this.frames.set(iid, f);
  }

  private callstack(r: ProtoReader): void {
    let iid = 0;
    const ids: number[] = [];
    while (r.next()) {
      if (r.field === 1) iid = r.varint();
      else if (r.field === 2 && r.wire === WIRE_LEN) {
        // packed frame_ids
        const p = r.sub();
        while (p.pos < p.end) ids.push(p.varint());
      } else if (r.field === 2) ids.push(r.varint());
      else r.skip();
    }
    if (ids.length > 0) {
      this.callstacks.set(iid, ids);
      this.resolved.delete(iid);
    }
  }

  /**
   * A callstack's frames, outermost first (the last is the top frame), or
   * undefined when the sequence did not intern it or its top frame; a frame
   * below the top that was not interned is left out. One array per callstack.
   */
  stack(callstackIid: number): readonly TraceFrame[] | undefined {
    const done = this.resolved.get(callstackIid);
    if (done !== undefined) return done;
    const ids = this.callstacks.get(callstackIid);
    if (ids === undefined || !this.frames.has(ids[ids.length - 1])) return undefined;
    const out: TraceFrame[] = [];
    for (const id of ids) {
      const f = this.frames.get(id);
      if (f !== undefined) out.push({ function: this.functionNames.get(f.functionIid) ?? '', url: this.sourcePaths.get(f.sourceIid) ?? '', line: f.line });
    }
    this.resolved.set(callstackIid, out);
    return out;
  }
}

/** One interned string (Perfetto's `{ iid = 1; str/name = 2 }`) into `into`; the reader's event names and annotations use it too. */
export function readInternedString(into: Map<number, string>, r: ProtoReader): void {
  let iid = 0;
  let text = '';
  while (r.next()) {
    if (r.field === 1) iid = r.varint();
    else if (r.field === 2 && r.wire === WIRE_LEN) text = r.string();
    else r.skip();
  }
  into.set(iid, text);
}

/** A PerfSample's thread and callstack; callstack 0 when it has none (a lost-records or skipped-sample note). */
export function readPerfSample(r: ProtoReader): { pid: number; tid: number; callstack: number } {
  const s = { pid: 0, tid: 0, callstack: 0 };
  while (r.next()) {
    if (r.field === 2) s.pid = r.varint();
    else if (r.field === 3) s.tid = r.varint();
    else if (r.field === 4) s.callstack = r.varint();
    else r.skip();
  }
  return s;
}
