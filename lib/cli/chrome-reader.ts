// Reads Chrome Trace Event JSON line by line: hotspan (like most writers)
// puts one event per line, so a file of any size is read in bounded memory
// and a file cut off mid-event reads up to its last whole event. Times are ts
// as written, in ns: for hotspan's files, ns on the performance.now() axis. Complete
// (X), begin/end (B/E), async (b/e), counter (C) and metadata (M) events.

import { processLists, recordingCounts, type Args, type AttrValue, type RecordingCounts, type TraceFrame, type TraceSink } from './trace-model';

interface ChromeEvent {
  name?: string;
  cat?: string;
  ph?: string;
  ts?: number;
  dur?: number;
  pid?: number | string;
  tid?: number | string;
  id?: number | string;
  args?: Record<string, AttrValue>;
}

interface Open {
  name: string;
  startNs: number;
  args: Args | undefined;
  timeline: string;
}

const nsOf = (us: number): number => Math.round(us * 1000);

/** A V8 CPU profile being read: its nodes' frames and callers, their stacks once built, and its last sample's time (us). */
interface ProfileRead {
  readonly frames: Map<number, TraceFrame>;
  readonly parents: Map<number, number>;
  readonly stacks: Map<number, readonly TraceFrame[]>;
  lastUs: number;
}

const newProfile = (lastUs: number): ProfileRead => ({ frames: new Map(), parents: new Map(), stacks: new Map(), lastUs });

/**
 * A node's stack, outermost frame first: its callers up to V8's "(root)"
 * node, which is no frame and is left out. A caller chain that loops or names
 * a node not read stops there.
 */
function stackOf(p: ProfileRead, id: number, top: TraceFrame): readonly TraceFrame[] {
  let s = p.stacks.get(id);
  if (s !== undefined) return s;
  const out: TraceFrame[] = [];
  const seen = new Set<number>();
  for (let n: number | undefined = id; n !== undefined && !seen.has(n); n = p.parents.get(n)) {
    seen.add(n);
    const f = p.frames.get(n);
    if (f === undefined) break;
    if (!p.parents.has(n) && f.function === '(root)' && f.url === '' && out.length > 0) break;
    out.push(f);
  }
  s = out.length === 0 ? [top] : out.reverse();
  p.stacks.set(id, s);
  return s;
}

interface ChunkNode {
  id?: unknown;
  parent?: unknown;
  callFrame?: { functionName?: unknown; url?: unknown; lineNumber?: unknown; columnNumber?: unknown };
}

/** Attributes nested deeper than this make an event malformed (a report would overflow the stack showing them). */
const MAX_ARGS_DEPTH = 64;

/** Whether `v` nests objects or arrays deeper than `max` levels (walked without recursion). */
function nestsDeeper(v: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop() as [unknown, number];
    if (typeof x !== 'object' || x === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(x) ? x : Object.values(x as object)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** What is wrong with an event that carries a span or a sample, or undefined when nothing is. */
function malformation(e: ChromeEvent): string | undefined {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return 'an event that is not an object';
  if (e.ph === 'M' || (e.ph !== 'X' && e.ph !== 'B' && e.ph !== 'E' && e.ph !== 'b' && e.ph !== 'e' && e.ph !== 'C')) return undefined;
  if (typeof e.ts !== 'number' || !Number.isFinite(e.ts)) return `ts ${JSON.stringify(e.ts) ?? 'missing'} is not a number`;
  if (e.ph === 'X' && e.dur !== undefined && (typeof e.dur !== 'number' || !Number.isFinite(e.dur) || e.dur < 0)) {
    return `dur ${JSON.stringify(e.dur)} is not a duration (a number, 0 or more)`;
  }
  if (e.args !== undefined && (typeof e.args !== 'object' || e.args === null || Array.isArray(e.args))) return 'args is not an object';
  if (e.args !== undefined && nestsDeeper(e.args, MAX_ARGS_DEPTH)) return `args nested deeper than ${String(MAX_ARGS_DEPTH)} levels`;
  return undefined;
}

/** Attributes as the model has them: hotspan's parent_id 0 (no parent) is left out. */
function argsOf(args: Record<string, AttrValue> | undefined): Args | undefined {
  if (args === undefined || typeof args !== 'object' || args === null) return undefined;
  if (args.parent_id === 0) {
    const rest: Args = { ...args };
    delete rest.parent_id;
    return rest;
  }
  return args;
}

/** An event's pid as a number, when it is one (or a string of one). */
function pidOf(e: ChromeEvent): number | undefined {
  const pid = typeof e.pid === 'string' && /^\d+$/.test(e.pid) ? Number(e.pid) : e.pid;
  return Number.isSafeInteger(pid) ? (pid as number) : undefined;
}

export class ChromeJsonDecoder {
  private readonly names = new Map<string, string>();
  private readonly emitted = new Set<string>();
  private readonly stacks = new Map<string, Open[]>();
  private readonly async = new Map<string, Open>();
  /** V8 profiles (Profile / ProfileChunk events), by pid:tid:id. */
  private readonly profiles = new Map<string, ProfileRead>();
  /** Members of the top-level object other than traceEvents (metadata). */
  trailer: Record<string, unknown> = {};

  events = 0;
  /** Events skipped as malformed, and what was wrong with the first. */
  malformed = 0;
  firstMalformed: string | undefined;

  constructor(private readonly sink: TraceSink) {}

  private timeline(e: ChromeEvent, kind: 'thread' | 'track' | 'counter', concurrent: boolean, suffix = ''): string {
    const base = `${String(e.pid ?? 0)}:${String(e.tid ?? 0)}`;
    const key = suffix === '' ? base : `${base}:${suffix}`;
    if (!this.emitted.has(key)) {
      this.emitted.add(key);
      const name = suffix === '' ? this.names.get(base) ?? `thread ${String(e.tid ?? 0)}` : suffix;
      const pid = pidOf(e);
      this.sink.timeline({ key, name, kind, concurrent, ...(pid === undefined ? {} : { pid }) });
    }
    return key;
  }

  event(e: ChromeEvent): void {
    this.events++;
    const wrong = malformation(e);
    if (wrong !== undefined) {
      if (this.malformed++ === 0) this.firstMalformed = `${wrong} (event ${String(this.events)}${typeof e?.name === 'string' ? `, "${e.name.slice(0, 40)}"` : ''})`;
      return;
    }
    const ts = typeof e.ts === 'number' ? nsOf(e.ts) : 0;
    const name = typeof e.name === 'string' ? e.name : '?';
    switch (e.ph) {
      case 'M':
        if (e.name === 'thread_name' && typeof e.args?.name === 'string') {
          this.names.set(`${String(e.pid ?? 0)}:${String(e.tid ?? 0)}`, e.args.name);
        }
        if (e.name === 'process_name' && typeof e.args?.name === 'string') {
          const pid = pidOf(e);
          if (pid !== undefined) this.sink.process?.(pid, e.args.name);
        }
        return;
      case 'X': {
        const tl = this.timeline(e, e.cat === 'span' || e.cat === undefined ? 'thread' : 'track', false);
        // The end is ts + dur in us, then ns (hotspan writes both on a grid
        // where that sum is exact); rounding each apart could be 1 ns off.
        const endNs = typeof e.dur === 'number' && typeof e.ts === 'number' ? nsOf(e.ts + e.dur) : ts;
        this.sink.span({ timeline: tl, name, startNs: ts, endNs, args: argsOf(e.args) });
        return;
      }
      case 'B': {
        const tl = this.timeline(e, 'thread', false);
        let st = this.stacks.get(tl);
        if (st === undefined) this.stacks.set(tl, (st = []));
        st.push({ name, startNs: ts, args: argsOf(e.args), timeline: tl });
        return;
      }
      case 'E': {
        const tl = this.timeline(e, 'thread', false);
        const o = this.stacks.get(tl)?.pop();
        if (o !== undefined) this.sink.span({ timeline: tl, name: o.name, startNs: o.startNs, endNs: ts, args: o.args });
        return;
      }
      case 'b':
      case 'e': {
        const key = `${String(e.pid ?? 0)}:${e.cat ?? ''}:${String(e.id ?? '')}`;
        if (e.ph === 'b') {
          const tl = this.timeline(e, 'track', true);
          this.async.set(key, { name, startNs: ts, args: argsOf(e.args), timeline: tl });
        } else {
          const o = this.async.get(key);
          if (o === undefined) return;
          this.async.delete(key);
          this.sink.span({ timeline: o.timeline, name: o.name, startNs: o.startNs, endNs: ts, args: o.args });
        }
        return;
      }
      case 'P':
        this.profileEvent(e);
        return;
      case 'C':
        for (const [k, v] of Object.entries(e.args ?? {})) {
          if (typeof v !== 'number') continue;
          const tl = this.timeline(e, 'counter', false, k === 'value' ? name : `${name}.${k}`);
          this.sink.counter?.(tl, ts, v);
        }
        return;
      default:
    }
  }

  /**
   * A V8 profile's events as DevTools writes them: Profile (its start, ts)
   * then ProfileChunks (new nodes, samples as node ids, timeDeltas in us from
   * the previous sample). Each sample goes to the sink with its top frame and
   * its stack (nodes name their caller, `parent`).
   */
  private profileEvent(e: ChromeEvent): void {
    const key = `${String(e.pid ?? 0)}:${String(e.tid ?? 0)}:${String(e.id ?? '')}`;
    const ts = typeof e.ts === 'number' && Number.isFinite(e.ts) ? e.ts : 0;
    if (e.name === 'Profile') {
      // ts, not args.data.startTime: Chrome writes that on another clock (as DevTools reads it).
      this.profiles.set(key, newProfile(ts));
      return;
    }
    if (e.name !== 'ProfileChunk') return;
    let p = this.profiles.get(key);
    if (p === undefined) this.profiles.set(key, (p = newProfile(ts)));
    const data = e.args?.data as { cpuProfile?: { nodes?: unknown; samples?: unknown }; timeDeltas?: unknown } | undefined;
    const nodes = Array.isArray(data?.cpuProfile?.nodes) ? (data.cpuProfile.nodes as ChunkNode[]) : [];
    for (const n of nodes) {
      if (typeof n !== 'object' || n === null || typeof n.id !== 'number') continue;
      const f = n.callFrame;
      const line = typeof f?.lineNumber === 'number' && f.lineNumber >= 0 ? f.lineNumber + 1 : 0;
      const column = typeof f?.columnNumber === 'number' && f.columnNumber >= 0 ? f.columnNumber + 1 : undefined;
      p.frames.set(n.id, {
        function: typeof f?.functionName === 'string' ? f.functionName : '',
        url: typeof f?.url === 'string' ? f.url : '',
        line,
        ...(column === undefined ? {} : { column }),
      });
      if (typeof n.parent === 'number') p.parents.set(n.id, n.parent);
    }
    const samples = Array.isArray(data?.cpuProfile?.samples) ? (data.cpuProfile.samples as unknown[]) : [];
    const deltas = Array.isArray(data?.timeDeltas) ? (data.timeDeltas as unknown[]) : [];
    const timeline = `${String(e.pid ?? 0)}:${String(e.tid ?? 0)}`;
    for (let i = 0; i < samples.length; i++) {
      const d = deltas[i];
      if (typeof d === 'number' && Number.isFinite(d)) p.lastUs += d;
      const id = samples[i];
      const frame = typeof id === 'number' ? p.frames.get(id) : undefined;
      if (frame !== undefined) this.sink.sample?.(timeline, nsOf(p.lastUs), frame, pidOf(e), stackOf(p, id as number, frame));
    }
  }

  unclosed(): number {
    let n = this.async.size;
    for (const st of this.stacks.values()) n += st.length;
    return n;
  }

  /** The traced processes the metadata says are missing or unfinished (hotspan run's join); undefined when it says nothing. */
  processes(): { missing: number[]; unfinished: number[] } | undefined {
    const meta = this.trailer.metadata as Record<string, unknown> | undefined;
    if (meta === undefined || typeof meta !== 'object' || meta === null) return undefined;
    if (meta.hotspan_missing_processes === undefined && meta.hotspan_unfinished_processes === undefined) return undefined;
    return processLists(meta.hotspan_missing_processes, meta.hotspan_unfinished_processes);
  }

  /** The recording counts in the trace's metadata ("hotspan" in the top-level "metadata"). */
  counts(): RecordingCounts | undefined {
    const meta = this.trailer.metadata as Record<string, unknown> | undefined;
    if (meta === undefined || typeof meta !== 'object' || meta === null) return undefined;
    const inner = meta.hotspan as Record<string, unknown> | undefined;
    return typeof inner === 'object' && inner !== null ? recordingCounts(inner) : undefined;
  }
}
