// CPU samples and processes of hotspan's outputs as real consumers read them
// (test/cli-convert-samples.test.ts): Perfetto through protoc's decoding
// against the vendored schema (interned tables per packet sequence, as a
// trace of several processes has one sequence each), Chrome JSON through
// DevTools' trace engine (its CPU profile model of each thread).
import { engineData, protocDecode } from './consumers';

/** protoc's text format as nested objects: every field a list of its values (strings, or objects for messages). */
export type Text = Map<string, Array<string | Text>>;

export function parseText(text: string): Text {
  const root: Text = new Map();
  const stack: Text[] = [root];
  const add = (m: Text, k: string, v: string | Text): void => {
    const list = m.get(k);
    if (list === undefined) m.set(k, [v]);
    else list.push(v);
  };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line === '}') {
      stack.pop();
      continue;
    }
    const open = /^(\w+) \{$/.exec(line);
    if (open !== null) {
      const child: Text = new Map();
      add(stack[stack.length - 1], open[1], child);
      stack.push(child);
      continue;
    }
    const kv = /^(\w+): (.*)$/.exec(line);
    if (kv === null) throw new Error(`protoc text: ${line}`);
    add(stack[stack.length - 1], kv[1], kv[2].startsWith('"') ? (JSON.parse(kv[2]) as string) : kv[2]);
  }
  return root;
}
export const one = (m: Text, k: string): string | undefined => m.get(k)?.[0] as string | undefined;
export const msgs = (m: Text, k: string): Text[] => (m.get(k) ?? []) as Text[];

/** A CPU sample as a consumer shows it: time, process, thread, and its stack's function names, outermost first. */
export interface ReadSample {
  ts: number;
  pid: number;
  tid: number;
  stack: string[];
}

export interface PerfettoRead {
  /** Process descriptors: pid -> name. */
  processes: Map<number, string>;
  /** Thread descriptors: pid -> tid -> thread name. */
  threads: Map<number, Map<number, string>>;
  /** Slice begins per pid (through their track's descriptor). */
  slices: Map<number, number>;
  /** perf_sample packets in file order (ts: the packet's, trace clock ns). */
  samples: ReadSample[];
}

interface Tables {
  functions: Map<string, string>;
  frames: Map<string, string>;
  callstacks: Map<string, string[]>;
}

/** A Perfetto file as protoc decodes it against the vendored schema. */
export function perfettoRead(bytes: Uint8Array): PerfettoRead {
  const packets = msgs(parseText(protocDecode(bytes)), 'packet');
  const out: PerfettoRead = { processes: new Map(), threads: new Map(), slices: new Map(), samples: [] };
  const tables = new Map<string, Tables>();
  const trackPid = new Map<string, number>();
  for (const p of packets) {
    const seq = one(p, 'trusted_packet_sequence_id') ?? '0';
    // SEQ_INCREMENTAL_STATE_CLEARED (1): the sequence's interned tables start over.
    if ((Number(one(p, 'sequence_flags') ?? 0) & 1) !== 0 || !tables.has(seq)) tables.set(seq, { functions: new Map(), frames: new Map(), callstacks: new Map() });
    const t = tables.get(seq) as Tables;
    for (const interned of msgs(p, 'interned_data')) {
      for (const e of msgs(interned, 'function_names')) t.functions.set(one(e, 'iid') as string, one(e, 'str') as string);
      for (const f of msgs(interned, 'frames')) t.frames.set(one(f, 'iid') as string, one(f, 'function_name_id') as string);
      for (const c of msgs(interned, 'callstacks')) t.callstacks.set(one(c, 'iid') as string, (c.get('frame_ids') ?? []) as string[]);
    }
    for (const td of msgs(p, 'track_descriptor')) {
      const uuid = one(td, 'uuid') as string;
      const proc = msgs(td, 'process')[0];
      const th = msgs(td, 'thread')[0];
      if (proc !== undefined) {
        const pid = Number(one(proc, 'pid'));
        trackPid.set(uuid, pid);
        out.processes.set(pid, one(proc, 'process_name') ?? '');
      } else if (th !== undefined) {
        const pid = Number(one(th, 'pid'));
        trackPid.set(uuid, pid);
        const threads = out.threads.get(pid) ?? new Map<number, string>();
        threads.set(Number(one(th, 'tid')), one(th, 'thread_name') ?? '');
        out.threads.set(pid, threads);
      } else {
        const parent = one(td, 'parent_uuid');
        const pid = parent === undefined ? undefined : trackPid.get(parent);
        if (pid !== undefined) trackPid.set(uuid, pid);
      }
    }
    for (const ev of msgs(p, 'track_event')) {
      if (one(ev, 'type') !== 'TYPE_SLICE_BEGIN') continue;
      const pid = trackPid.get(one(ev, 'track_uuid') as string) ?? -1;
      out.slices.set(pid, (out.slices.get(pid) ?? 0) + 1);
    }
    for (const s of msgs(p, 'perf_sample')) {
      const frames = t.callstacks.get(one(s, 'callstack_iid') as string) ?? [];
      const stack = frames.map((f) => t.functions.get(t.frames.get(f) ?? '') ?? '?');
      out.samples.push({ ts: Number(one(p, 'timestamp')), pid: Number(one(s, 'pid')), tid: Number(one(s, 'tid')), stack });
    }
  }
  return out;
}

/** Per pid, per tid, the samples of the CPU profiles DevTools' trace engine builds (ts in us, stack outermost first, without V8's root). */
export async function devtoolsSamples(events: unknown[]): Promise<Map<number, Map<number, ReadSample[]>>> {
  const out = new Map<number, Map<number, ReadSample[]>>();
  for (const [pid, threads] of (await engineData(events)).Samples.profilesInProcess) {
    const perThread = new Map<number, ReadSample[]>();
    out.set(pid, perThread);
    for (const [tid, profile] of threads) {
      const m = profile.parsedProfile;
      const list: ReadSample[] = [];
      for (let i = 0; i < (m.samples ?? []).length; i++) {
        const stack: string[] = [];
        for (let n = m.nodeByIndex(i); n?.parent; n = n.parent) stack.unshift(n.functionName);
        list.push({ ts: m.timestamps[i], pid, tid, stack });
      }
      perThread.set(tid, list);
    }
  }
  return out;
}
