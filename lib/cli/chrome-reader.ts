// Reads Chrome Trace Event JSON line by line: hotspan (like most writers)
// puts one event per line, so a file of any size is read in bounded memory
// and a file cut off mid-event reads up to its last whole event. Times are ts
// as written, in ns: for hotspan's files, ns on the performance.now() axis. Complete
// (X), begin/end (B/E), async (b/e), counter (C) and metadata (M) events.

import { recordingCounts, type Args, type AttrValue, type RecordingCounts, type TraceSink } from './trace-model';

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

export class ChromeJsonDecoder {
  private readonly names = new Map<string, string>();
  private readonly emitted = new Set<string>();
  private readonly stacks = new Map<string, Open[]>();
  private readonly async = new Map<string, Open>();
  /** Members of the top-level object other than traceEvents (metadata). */
  trailer: Record<string, unknown> = {};

  events = 0;

  constructor(private readonly sink: TraceSink) {}

  private timeline(e: ChromeEvent, kind: 'thread' | 'track' | 'counter', concurrent: boolean, suffix = ''): string {
    const base = `${String(e.pid ?? 0)}:${String(e.tid ?? 0)}`;
    const key = suffix === '' ? base : `${base}:${suffix}`;
    if (!this.emitted.has(key)) {
      this.emitted.add(key);
      const name = suffix === '' ? this.names.get(base) ?? `thread ${String(e.tid ?? 0)}` : suffix;
      this.sink.timeline({ key, name, kind, concurrent });
    }
    return key;
  }

  event(e: ChromeEvent): void {
    this.events++;
    const ts = typeof e.ts === 'number' ? nsOf(e.ts) : 0;
    const name = typeof e.name === 'string' ? e.name : '?';
    switch (e.ph) {
      case 'M':
        if (e.name === 'thread_name' && typeof e.args?.name === 'string') {
          this.names.set(`${String(e.pid ?? 0)}:${String(e.tid ?? 0)}`, e.args.name);
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

  unclosed(): number {
    let n = this.async.size;
    for (const st of this.stacks.values()) n += st.length;
    return n;
  }

  /** The recording counts in the trace's metadata ("hotspan" in the top-level "metadata"). */
  counts(): RecordingCounts | undefined {
    const meta = this.trailer.metadata as Record<string, unknown> | undefined;
    if (meta === undefined || typeof meta !== 'object' || meta === null) return undefined;
    const inner = meta.hotspan as Record<string, unknown> | undefined;
    return typeof inner === 'object' && inner !== null ? recordingCounts(inner) : undefined;
  }
}
