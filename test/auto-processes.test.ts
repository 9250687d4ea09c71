// Every process in one trace: `hotspan run` traces the Node children its
// program starts (fork, execFile, a cluster worker: they inherit NODE_OPTIONS's preload) and
// joins their files into its output, a process per pid, on one time axis.
// The order of the spans of two processes is known from a handshake (the
// parent's "before" ends before it starts a child, its "after" begins after
// the child exited), not from timing. Read back by real consumers: protoc and
// protobufjs with the vendored perfetto_trace.proto, DevTools' trace engine.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { protobufjsPackets, protocDecode, traceEngineFlows, traceEngineProcesses, traceEngineProcessNames } from './support/consumers';
import { buildView } from '../lib/cli/view';
import { cliPath, readSpans, repoRoot, type PlainSpan } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-procs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const PARENT = path.join(__dirname, 'fixtures', 'processes', 'parent.js');
const AUTO = path.join(repoRoot, 'dist', 'auto.js');
// The parent holds its first span open this long (performance.now() ms), so
// a child's times on an axis of its own would fall before that span's end.
const HOLD_MS = '400';

interface Pids {
  parent: number;
  children: number[];
  /** The context of the span each child was started in ("start <how>"), by how. */
  contexts: Record<string, { traceId: string; spanId: string }>;
}

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, HOTSPAN_AUTO_MODULE: AUTO, HOLD_MS, ...extra };
  for (const k of ['HOTSPAN_FLUSH_MS', 'HOTSPAN_OUT', 'HOTSPAN_OUT_PID', 'HOTSPAN_PARTS_DIR', 'HOTSPAN_TRACE_ORIGIN_NS', 'NODE_OPTIONS', 'TRACEPARENT', 'TRACESTATE', 'HOTSPAN_PARENT_LINK']) {
    if (!(k in extra)) delete e[k];
  }
  return e;
}

function hotspanRun(out: string, extra: NodeJS.ProcessEnv = {}): { pids: Pids; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '-i', 'http', '--no-report', '--', process.execPath, PARENT], {
    encoding: 'utf8',
    env: env(extra),
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return { pids: JSON.parse(r.stdout) as Pids, stderr: r.stderr };
}

/** The one span named `name`. */
function one<T extends { name: string }>(spans: T[], name: string): T {
  const found = spans.filter((s) => s.name === name);
  expect(found, `${name} in ${JSON.stringify(spans.map((s) => s.name))}`).toHaveLength(1);
  return found[0];
}

/**
 * The name each process should have (TracerOptions.processName's default:
 * what it runs): the parent its script, the forked and exec'd children
 * theirs, the cluster worker its script and worker id. Not "hotspan".
 */
function expectedNames(pids: Pids): Map<number, string> {
  return new Map([
    [pids.parent, 'parent.js'],
    [pids.children[0], 'child.js'],
    [pids.children[1], 'child.js'],
    [pids.children[2], 'child.js (worker 1)'],
  ]);
}

/** The handshake's order: before < each child (in turn) < after. */
function expectOrdered(spans: Array<{ name: string; start: number; end: number }>): void {
  const seq = ['before', 'child forked', 'child exec', 'child cluster', 'after'].map((n) => one(spans, n));
  for (let i = 1; i < seq.length; i++) {
    expect(seq[i].start, `${seq[i].name} starts after ${seq[i - 1].name} ends`).toBeGreaterThanOrEqual(seq[i - 1].end);
  }
}

interface Packet {
  trustedPacketSequenceId?: number;
  timestamp?: string;
  timestampClockId?: number;
  clockSnapshot?: { clocks?: Array<{ clockId?: number; timestamp?: string }> };
  trackDescriptor?: { uuid?: string; name?: string; process?: { pid?: number }; thread?: { pid?: number; tid?: number } };
  trackEvent?: { type?: string; trackUuid?: string; nameIid?: string; name?: string; flowIds?: string[]; terminatingFlowIds?: string[] };
  internedData?: { eventNames?: Array<{ iid?: string; name?: string }> };
}

describe('hotspan run: every process in one trace', () => {
  it('Perfetto: a process per pid, each on its own sequence, on one time axis', () => {
    const out = path.join(tmp, 'procs.pftrace');
    const { pids } = hotspanRun(out);
    expect(pids.children).toHaveLength(3);
    const all = [pids.parent, ...pids.children];

    // hotspan's own reader (report, view, convert).
    const { spans, summary } = readSpans(out);
    const mine = spans.filter((s: PlainSpan) => s.name === 'before' || s.name === 'after' || s.name.startsWith('child '));
    expectOrdered(mine);
    // The counts are the sum of the three processes' (each kept its spans).
    expect(summary.counts?.kept).toBeGreaterThanOrEqual(4);

    // protoc: the joined file is one valid Trace with one process descriptor per pid.
    const text = protocDecode(readFileSync(out));
    const described = [...text.matchAll(/process \{\s*pid: (\d+)/g)].map((m) => Number(m[1]));
    expect(described.sort()).toEqual([...all].sort());
    // ... each named by what it runs.
    const named = new Map([...text.matchAll(/process \{\s*pid: (\d+)\s*process_name: "([^"]*)"/g)].map((m) => [Number(m[1]), m[2]]));
    expect(named).toEqual(expectedNames(pids));

    // protobufjs: each process's packets on a sequence of its own (its pid), track uuids
    // distinct across processes, and the slices' times put on MONOTONIC through each
    // sequence's own clock snapshot (as trace processor does) in the handshake's order.
    const packets = protobufjsPackets<Packet>(readFileSync(out));
    const seqs = new Set(packets.map((p) => p.trustedPacketSequenceId));
    // ... and one sequence more: the flows from each spawn to its child (lib/cli/join-links.ts).
    const LINKS = 0x7ffffff0;
    expect([...seqs].sort()).toEqual([...all, LINKS].sort());
    const uuidOwner = new Map<string, number>();
    const toMono = new Map<number, bigint>();
    const names = new Map<string, string>();
    const slices: Array<{ name: string; start: number; end: number }> = [];
    const open = new Map<string, Array<{ name: string; start: number }>>();
    for (const p of packets) {
      const seq = p.trustedPacketSequenceId ?? 0;
      const td = p.trackDescriptor;
      if (td?.uuid !== undefined) {
        const owner = uuidOwner.get(td.uuid);
        expect(owner === undefined || owner === seq, `track uuid ${td.uuid} of two processes`).toBe(true);
        uuidOwner.set(td.uuid, seq);
      }
      const clocks = p.clockSnapshot?.clocks;
      if (clocks !== undefined) {
        const ours = clocks.find((c) => c.clockId === 64);
        const mono = clocks.find((c) => c.clockId === 3);
        toMono.set(seq, BigInt(mono?.timestamp ?? 0) - BigInt(ours?.timestamp ?? 0));
      }
      for (const n of p.internedData?.eventNames ?? []) names.set(`${String(seq)}/${n.iid ?? ''}`, n.name ?? '');
      const ev = p.trackEvent;
      if (ev === undefined || ev.trackUuid === undefined) continue;
      const t = Number(BigInt(p.timestamp ?? 0) + (toMono.get(seq) ?? 0n));
      const stack = open.get(ev.trackUuid) ?? [];
      open.set(ev.trackUuid, stack);
      if (ev.type === 'TYPE_SLICE_BEGIN') stack.push({ name: names.get(`${String(seq)}/${ev.nameIid ?? ''}`) ?? '?', start: t });
      if (ev.type === 'TYPE_SLICE_END') {
        const b = stack.pop();
        if (b !== undefined) slices.push({ ...b, end: t });
      }
    }
    expectOrdered(slices);
    expect(existsSync(path.join(tmp, 'procs'))).toBe(false);
  });

  it('Chrome JSON: a process per pid (DevTools trace engine), ts on one axis', async () => {
    const out = path.join(tmp, 'procs.json');
    const { pids } = hotspanRun(out);
    const all = [pids.parent, ...pids.children];
    const doc = JSON.parse(readFileSync(out, 'utf8')) as {
      traceEvents: Array<{ name: string; ph: string; pid: number; ts: number; dur?: number }>;
      metadata: { hotspan?: { kept?: number }; hotspan_processes?: Record<string, { kept?: number }> };
    };
    const spans = doc.traceEvents.filter((e) => e.ph === 'X').map((e) => ({ name: e.name, pid: e.pid, start: e.ts, end: e.ts + (e.dur ?? 0) }));
    expectOrdered(spans);
    expect(one(spans, 'before').pid).toBe(pids.parent);
    expect(one(spans, 'after').pid).toBe(pids.parent);
    expect(one(spans, 'child forked').pid).toBe(pids.children[0]);
    expect(one(spans, 'child exec').pid).toBe(pids.children[1]);
    expect(one(spans, 'child cluster').pid).toBe(pids.children[2]);
    // The counts: each process's, and their sum.
    const per = doc.metadata.hotspan_processes ?? {};
    expect(Object.keys(per).map(Number).sort()).toEqual([...all].sort());
    const sum = Object.values(per).reduce((a, c) => a + (c.kept ?? 0), 0);
    expect(doc.metadata.hotspan?.kept).toBe(sum);

    // DevTools' trace engine: one process per pid, each with its spans on its thread tree.
    const engine = await traceEngineNames(doc.traceEvents);
    for (const pid of all) expect(engine.has(pid), `pid ${String(pid)} in ${JSON.stringify([...engine.keys()])}`).toBe(true);
    expect(engine.get(pids.parent)).toEqual(expect.arrayContaining(['before', 'after']));
    expect(engine.get(pids.children[0])).toContain('child forked');
    expect(engine.get(pids.children[1])).toContain('child exec');
    expect(engine.get(pids.children[2])).toContain('child cluster');
    // ... each process named by what it runs, in the file and in the engine.
    const metaNames = new Map(doc.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => [e.pid, (e as { args?: { name?: string } }).args?.name]));
    expect(metaNames).toEqual(expectedNames(pids));
    expect(await traceEngineProcessNames(doc.traceEvents)).toEqual(expectedNames(pids));
  });

  it('a child killed before it wrote is counted as missing', () => {
    const out = path.join(tmp, 'killed.json');
    // No periodic flush: the child writes nothing before it is killed.
    const { pids, stderr } = hotspanRun(out, { CHILD_KILL: '1', HOTSPAN_FLUSH_MS: '0' });
    const killed = pids.children[3];
    expect(stderr).toContain(`1 traced process(es) wrote no trace (killed, or still running): pid ${String(killed)}`);
    const doc = JSON.parse(readFileSync(out, 'utf8')) as { metadata: { hotspan_missing_processes?: number[] } };
    expect(doc.metadata.hotspan_missing_processes).toEqual([killed]);
    const text = spawnSync(process.execPath, [cliPath, 'report', out], { encoding: 'utf8', timeout: 120_000 });
    expect(text.stdout + text.stderr).toContain(`1 traced process(es) wrote no trace (killed before their first flush): pid ${String(killed)}`);
  });

  it('Perfetto: a child killed before it wrote is counted as missing by the report', () => {
    const out = path.join(tmp, 'killed.pftrace');
    const { pids } = hotspanRun(out, { CHILD_KILL: '1', HOTSPAN_FLUSH_MS: '0' });
    const killed = pids.children[3];
    const { text, json } = report(out);
    expect(text).toContain(`1 traced process(es) wrote no trace (killed before their first flush): pid ${String(killed)}`);
    expect(json.files[0].processes).toEqual({ missing: [killed], unfinished: [] });
    expect(json.processes.map((p) => p.pid)).not.toContain(killed);
    // protoc: still one valid Trace, the lists in a track descriptor of their own.
    const decoded = protocDecode(readFileSync(out));
    expect(decoded).toContain('name: "hotspan.processes"');
    expect(decoded).toContain(`description: "{\\"missing\\":[${String(killed)}],\\"unfinished\\":[]}"`);
  });
});

interface ReportJson {
  spans: number;
  names: Array<{ name: string; count: number }>;
  timelines: Array<{ name: string; spans: number; pid?: number }>;
  processes: Array<{ pid: number; name: string | null; spans: number; names: Array<{ name: string; count: number }>; timelines: Array<{ spans: number; pid?: number }> }>;
  files: Array<{ processes: { missing: number[]; unfinished: number[] } | null }>;
}

function report(file: string): { text: string; json: ReportJson } {
  const text = spawnSync(process.execPath, [cliPath, 'report', file], { encoding: 'utf8', timeout: 120_000 });
  expect(text.status, text.stderr).toBe(0);
  const json = spawnSync(process.execPath, [cliPath, 'report', '--json', file], { encoding: 'utf8', timeout: 120_000 });
  expect(json.status, json.stderr).toBe(0);
  return { text: text.stdout + text.stderr, json: JSON.parse(json.stdout) as ReportJson };
}

/** A group's span counts by name. */
const countsOf = (names: Array<{ name: string; count: number }>): Record<string, number> => Object.fromEntries(names.map((n) => [n.name, n.count]));

describe('hotspan report: a trace of several processes, grouped by process', () => {
  for (const ext of ['pftrace', 'json']) {
    it(`${ext}: each pid's spans in a group of its own, text and --json`, () => {
      const out = path.join(tmp, `groups.${ext}`);
      const { pids } = hotspanRun(out);
      expect(pids.children).toHaveLength(3);
      const { text, json } = report(out);
      // Chrome JSON has each flow end as a zero-length event on its process's thread (join-links.ts); Perfetto as an instant, not a span.
      const link = (name: string): Record<string, number> => (ext === 'json' ? { [name]: 1 } : {});
      const spawnLinks: Record<string, number> = ext === 'json' ? { 'spawn node': 3 } : {};
      const expected: Record<number, Record<string, number>> = {
        [pids.parent]: { before: 1, after: 1, 'start forked': 1, 'start exec': 1, 'start cluster': 1, ...spawnLinks },
        [pids.children[0]]: { 'child forked': 1, ...link(`started by pid ${String(pids.parent)}`) },
        [pids.children[1]]: { 'child exec': 1, ...link(`started by pid ${String(pids.parent)}`) },
        [pids.children[2]]: { 'child cluster': 1, ...link(`started by pid ${String(pids.parent)}`) },
      };
      const all = [pids.parent, ...pids.children].sort((a, b) => a - b);
      expect(json.processes.map((p) => p.pid)).toEqual(all);
      for (const p of json.processes) {
        expect(countsOf(p.names), `pid ${String(p.pid)}`).toEqual(expected[p.pid]);
        const n = Object.values(expected[p.pid]).reduce((a, b) => a + b, 0);
        expect(p.spans).toBe(n);
        const name = expectedNames(pids).get(p.pid);
        expect(p.name).toBe(name);
        expect(p.timelines.every((t) => t.pid === p.pid)).toBe(true);
        expect(text).toContain(`process ${String(p.pid)} (${String(name)}): ${String(n)} spans, per name (ms)`);
      }
      // hotspan view: the rows under a header per process, each named by what it runs, the program's first.
      const { data } = buildView(out);
      const headers = [pids.parent, ...pids.children.slice().sort((a, b) => a - b)].map((pid) => `${String(expectedNames(pids).get(pid))} (pid ${String(pid)})`);
      expect(data.groups.map((g) => g.name)).toEqual(headers);
      // The totals are unchanged: every span once, in one group.
      expect(json.processes.reduce((a, p) => a + p.spans, 0)).toBe(json.spans);
      expect(json.names.reduce((a, x) => a + x.count, 0)).toBe(json.spans);
      expect(json.timelines.map((t) => t.pid).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(all);
    });
  }

  it('a trace of one process has no groups', () => {
    const out = path.join(tmp, 'one.pftrace');
    const child = path.join(__dirname, 'fixtures', 'processes', 'child.js');
    const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '-i', 'http', '--no-report', '--', process.execPath, child, 'plain'], {
      encoding: 'utf8',
      env: env(),
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const { text, json } = report(out);
    expect(json.processes).toEqual([]);
    expect(countsOf(json.names)).toEqual({ 'child plain': 1 });
    expect(text).not.toContain('process ');
  });
});

describe('hotspan/auto without hotspan run', () => {
  it('a child that inherited HOTSPAN_OUT writes a file of its own beside it', () => {
    const dir = mkdtempSync(path.join(tmp, 'plain-'));
    const out = path.join(dir, 'trace.json');
    const r = spawnSync(process.execPath, ['--require', AUTO, PARENT], {
      encoding: 'utf8',
      env: env({ HOTSPAN_OUT: out, HOTSPAN_INSTRUMENT: 'http' }),
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const pids = JSON.parse(r.stdout) as Pids;
    expect(readdirSync(dir).sort()).toEqual(['trace.json', ...pids.children.map((p) => `trace-${String(p)}.json`)].sort());
    const names = (file: string): string[] =>
      (JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { traceEvents: Array<{ ph: string; name: string }> }).traceEvents
        .filter((e) => e.ph === 'X')
        .map((e) => e.name);
    expect(names('trace.json')).toEqual(expect.arrayContaining(['before', 'after']));
    expect(names(`trace-${String(pids.children[0])}.json`)).toEqual(['child forked']);
    expect(names(`trace-${String(pids.children[1])}.json`)).toEqual(['child exec']);
    expect(names(`trace-${String(pids.children[2])}.json`)).toEqual(['child cluster']);
  });
});

/** Per pid, the names of the spans on the DevTools trace engine's thread trees. */
async function traceEngineNames(events: unknown[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const [pid, threads] of await traceEngineProcesses(events)) out.set(pid, [...threads.values()].flat().map((n) => n.name));
  return out;
}

const HOWS = ['forked', 'exec', 'cluster'] as const;

/** hotspan run with each child writing the ids its span got (test/fixtures/processes/child.js). */
function linkedRun(out: string): { pids: Pids; info: Record<string, { traceId: string; parentSpanId: string }> } {
  const infoDir = mkdtempSync(path.join(tmp, 'info-'));
  const { pids } = hotspanRun(out, { CHILD_INFO_DIR: infoDir });
  const info: Record<string, { traceId: string; parentSpanId: string }> = {};
  for (const how of HOWS) info[how] = JSON.parse(readFileSync(path.join(infoDir, `${how}.json`), 'utf8')) as { traceId: string; parentSpanId: string };
  return { pids, info };
}

describe('hotspan run: each child linked to the span that started it', () => {
  it("a child's spans are in its parent span's trace, that span their parent (the ids exportOtlp sends)", () => {
    const { pids, info } = linkedRun(path.join(tmp, 'ids.json'));
    for (const how of HOWS) {
      expect(info[how].traceId, how).toBe(pids.contexts[how].traceId);
      expect(info[how].parentSpanId, how).toBe(pids.contexts[how].spanId);
    }
    // Three spans, three traces: each child got the span open at its own spawn.
    expect(new Set(HOWS.map((h) => pids.contexts[h].spanId)).size).toBe(3);
  });

  it('Chrome JSON: a flow from inside the start span to the child, as DevTools draws it', async () => {
    const out = path.join(tmp, 'flows.json');
    const { pids } = linkedRun(out);
    const doc = JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: Array<{ name: string; ph: string; pid: number; tid: number; ts: number; dur?: number }> };
    const flows = await traceEngineFlows(doc.traceEvents);
    expect(flows).toHaveLength(3);
    const spans = doc.traceEvents.filter((e) => e.ph === 'X');
    for (const [i, how] of HOWS.entries()) {
      const start = one(spans, `start ${how}`);
      const flow = flows.find((f) => f[f.length - 1].pid === pids.children[i]);
      expect(flow, `a flow into ${how}`).toBeDefined();
      const [from, to] = [flow![0], flow![flow!.length - 1]];
      expect(from.pid).toBe(pids.parent);
      expect(from.tid).toBe(start.tid);
      // Inside the span that was open at the spawn, before the child's own span.
      expect(from.ts).toBeGreaterThanOrEqual(start.ts);
      expect(from.ts).toBeLessThanOrEqual(start.ts + (start.dur ?? 0));
      expect(to.ts).toBeLessThanOrEqual(one(spans, `child ${how}`).ts);
      expect(to.tid).toBe(one(spans, `child ${how}`).tid);
    }
  });

  it('Perfetto: flow ids from the start span to the child, on each process\'s thread track', () => {
    const out = path.join(tmp, 'flows.pftrace');
    const { pids } = linkedRun(out);
    // protoc reads the whole file (the appended link packets included) as one Trace.
    expect(protocDecode(readFileSync(out))).toContain('terminating_flow_ids');
    const packets = protobufjsPackets<Packet>(readFileSync(out));
    const threadOf = new Map<string, { pid?: number; tid?: number }>();
    const toMono = new Map<number, bigint>();
    const names = new Map<string, string>();
    const open = new Map<string, Array<{ name: string; start: bigint }>>();
    const slices: Array<{ name: string; pid: number; start: bigint; end: bigint }> = [];
    const ends = new Map<string, { from?: { pid?: number; t: bigint }; to?: { pid?: number; t: bigint } }>();
    for (const p of packets) {
      const seq = p.trustedPacketSequenceId ?? 0;
      const td = p.trackDescriptor;
      if (td?.uuid !== undefined && td.thread !== undefined) threadOf.set(td.uuid, td.thread);
      const clocks = p.clockSnapshot?.clocks;
      if (clocks !== undefined) {
        const ours = clocks.find((c) => c.clockId === 64);
        const mono = clocks.find((c) => c.clockId === 3);
        toMono.set(seq, BigInt(mono?.timestamp ?? 0) - BigInt(ours?.timestamp ?? 0));
      }
      for (const n of p.internedData?.eventNames ?? []) names.set(`${String(seq)}/${n.iid ?? ''}`, n.name ?? '');
      const ev = p.trackEvent;
      if (ev?.trackUuid === undefined) continue;
      // The link packets carry their clock (MONOTONIC, id 3); the parts' spans are on their sequence's clock 64.
      const t = BigInt(p.timestamp ?? 0) + (p.timestampClockId === 3 ? 0n : (toMono.get(seq) ?? 0n));
      for (const id of ev.flowIds ?? []) ends.set(id, { ...ends.get(id), from: { pid: threadOf.get(ev.trackUuid)?.pid, t } });
      for (const id of ev.terminatingFlowIds ?? []) ends.set(id, { ...ends.get(id), to: { pid: threadOf.get(ev.trackUuid)?.pid, t } });
      const stack = open.get(ev.trackUuid) ?? [];
      open.set(ev.trackUuid, stack);
      if (ev.type === 'TYPE_SLICE_BEGIN') stack.push({ name: names.get(`${String(seq)}/${ev.nameIid ?? ''}`) ?? '?', start: t });
      if (ev.type === 'TYPE_SLICE_END') {
        const b = stack.pop();
        if (b !== undefined) slices.push({ ...b, pid: threadOf.get(ev.trackUuid)?.pid ?? -1, end: t });
      }
    }
    expect(ends.size).toBe(3);
    for (const [i, how] of HOWS.entries()) {
      const start = one(slices, `start ${how}`);
      const child = one(slices, `child ${how}`);
      const link = [...ends.values()].find((e) => e.to?.pid === pids.children[i]);
      expect(link?.from?.pid, how).toBe(pids.parent);
      expect(link!.from!.t >= start.start && link!.from!.t <= start.end, `${how}: the flow starts inside its start span`).toBe(true);
      expect(link!.to!.t <= child.start, `${how}: the flow ends before the child's span`).toBe(true);
    }
  });

  it('the sync spawns (spawnSync, execSync, execFileSync) carry the context and a flow as the async ones do', async () => {
    const SYNC = ['spawnSync', 'execSync', 'execFileSync'] as const;
    const infoDir = mkdtempSync(path.join(tmp, 'info-'));
    const out = path.join(tmp, 'sync.json');
    const { pids } = hotspanRun(out, { CHILD_INFO_DIR: infoDir, CHILD_SYNC: '1' });
    const info = Object.fromEntries(
      SYNC.map((how) => [how, JSON.parse(readFileSync(path.join(infoDir, `${how}.json`), 'utf8')) as { pid: number; traceId: string; parentSpanId: string }]),
    );
    for (const how of SYNC) {
      expect(info[how].traceId, how).toBe(pids.contexts[how].traceId);
      expect(info[how].parentSpanId, how).toBe(pids.contexts[how].spanId);
    }
    // One flow per child (a sync spawn is not also seen as an async one), from inside its start span.
    const doc = JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: Array<{ name: string; ph: string; pid: number; tid: number; ts: number; dur?: number }> };
    const flows = await traceEngineFlows(doc.traceEvents);
    expect(flows).toHaveLength(HOWS.length + SYNC.length);
    const spans = doc.traceEvents.filter((e) => e.ph === 'X');
    for (const how of SYNC) {
      const into = flows.filter((f) => f[f.length - 1].pid === info[how].pid);
      expect(into, how).toHaveLength(1);
      const start = one(spans, `start ${how}`);
      expect(into[0][0].pid).toBe(pids.parent);
      expect(into[0][0].ts).toBeGreaterThanOrEqual(start.ts);
      expect(into[0][0].ts).toBeLessThanOrEqual(start.ts + (start.dur ?? 0));
      expect(one(spans, `child ${how}`).pid).toBe(info[how].pid);
    }
  });

  it('a bad TRACEPARENT or flow id is named in a warning and ignored', () => {
    const child = path.join(__dirname, 'fixtures', 'processes', 'child.js');
    const r = spawnSync(process.execPath, ['--require', AUTO, child, 'plain'], {
      encoding: 'utf8',
      env: env({ HOTSPAN_OUT: path.join(tmp, 'bad.json'), HOTSPAN_INSTRUMENT: 'http', TRACEPARENT: '00-nothex-01', HOTSPAN_PARENT_LINK: 'xyz' }),
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('TRACEPARENT is not a W3C traceparent, got "00-nothex-01"');
    expect(r.stderr).toContain('HOTSPAN_PARENT_LINK must be 16 lowercase hex digits, got "xyz"');
  });
});

describe('hotspan run: a killed child leaves its spans up to its last flush', () => {
  for (const ext of ['json', 'pftrace']) {
    it(`${ext}: the flushed part is joined and named as unfinished`, () => {
      const out = path.join(tmp, `flushkill.${ext}`);
      // The child waits until a flush wrote its part, then SIGKILLs itself (no timing: a marker).
      const { pids, stderr } = hotspanRun(out, { CHILD_FLUSHKILL: '1', HOTSPAN_FLUSH_MS: '50' });
      const killed = pids.children[3];
      expect(stderr).toContain(`1 traced process(es) ended without writing their trace at exit (killed, or still running): their spans up to their last flush are in, later ones are lost: pid ${String(killed)}`);
      expect(stderr).not.toContain('wrote no trace');
      const { spans } = readSpans(out);
      expect(spans.filter((s: PlainSpan) => s.name === 'child flushkill')).toHaveLength(1);
      if (ext === 'json') {
        const doc = JSON.parse(readFileSync(out, 'utf8')) as {
          traceEvents: Array<{ name: string; pid: number }>;
          metadata: { hotspan_unfinished_processes?: number[]; hotspan_missing_processes?: number[] };
        };
        expect(doc.metadata.hotspan_unfinished_processes).toEqual([killed]);
        expect(doc.metadata.hotspan_missing_processes).toBeUndefined();
        expect(one(doc.traceEvents, 'child flushkill').pid).toBe(killed);
      }
      // hotspan report says what is missing, in text and --json, from either format (Perfetto: the join's "hotspan.processes" descriptor).
      const { text, json } = report(out);
      expect(text).toContain(`1 traced process(es) did not finish their trace (killed): spans after their last flush are lost, not counted: pid ${String(killed)}`);
      expect(text).not.toContain('wrote no trace');
      expect(json.files[0].processes).toEqual({ missing: [], unfinished: [killed] });
      // The killed child's flushed span is in its own group.
      const group = json.processes.find((p) => p.pid === killed);
      expect(group?.names.find((n) => n.name === 'child flushkill')?.count).toBe(1);
    });
  }

  it('a bad HOTSPAN_FLUSH_MS is named in a warning', () => {
    const child = path.join(__dirname, 'fixtures', 'processes', 'child.js');
    const r = spawnSync(process.execPath, ['--require', AUTO, child, 'plain'], {
      encoding: 'utf8',
      env: env({ HOTSPAN_OUT: path.join(tmp, 'badflush.json'), HOTSPAN_INSTRUMENT: 'http', HOTSPAN_FLUSH_MS: '1.5s' }),
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('HOTSPAN_FLUSH_MS must be 0 (no flush) or a whole number of ms from 10 to 2147483647, got "1.5s"; not flushing');
  });
});
