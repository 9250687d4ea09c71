// The real consumers of hotspan's outputs, driven from Node: Chrome DevTools'
// trace engine (@paulirish/trace_engine), speedscope's importer (npm
// speedscope), Google's protobuf decoder (protoc) and protobufjs, the last
// two with the vendored perfetto_trace.proto.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';
import * as protobuf from 'protobufjs';

import { toolBin } from './tools';

const root = path.join(__dirname, '..', '..');
export const PERFETTO_PROTO = path.join(root, 'vendor', 'perfetto', 'perfetto_trace.proto');

// ---- DevTools' trace engine ----

/** A span as the engine's thread tree holds it. */
export interface EngineNode {
  spanId: number;
  name: string;
  /** span_id of the node above it in the tree; 0 at a root. */
  parent: number;
}

interface TreeNode {
  entry: { name: string; args?: { span_id?: number } };
  children: Iterable<TreeNode>;
}
interface EngineModule {
  TraceModel: {
    Model: {
      createWithAllHandlers(): {
        parse(events: unknown[]): Promise<void>;
        parsedTrace(): {
          data: {
            Renderer: { processes: Map<number, { threads: Map<number, { tree?: { roots: Iterable<TreeNode> } }> }> };
            Flows: { flows: Array<Array<{ name: string; pid: number; tid: number; ts: number }>> };
            Meta: { processNames: Map<number, { args?: { name?: string } }> };
            Samples: { profilesInProcess: Map<number, Map<number, { parsedProfile: EngineProfile }>> };
          };
        };
      };
    };
  };
}

/** Per tid, every span in the engine's thread tree with the parent the tree gives it. */
export async function traceEngineTrees(events: unknown[]): Promise<Map<number, EngineNode[]>> {
  const out = new Map<number, EngineNode[]>();
  for (const threads of (await traceEngineProcesses(events)).values()) for (const [tid, nodes] of threads) out.set(tid, nodes);
  return out;
}

/** A thread's CPU profile as the engine models it (its CPUProfileDataModel). */
export interface EngineProfile {
  samples?: number[];
  /** Per sample, us. */
  timestamps: number[];
  nodeByIndex(index: number): EngineProfileNode | null;
}
export interface EngineProfileNode {
  functionName: string;
  parent: EngineProfileNode | null;
}

/** The engine's parsed data of `events`. */
export async function engineData(events: unknown[]): Promise<ReturnType<ReturnType<EngineModule['TraceModel']['Model']['createWithAllHandlers']>['parsedTrace']>['data']> {
  // The engine measures with DOMRect, which Node lacks (its README says to polyfill it).
  const g = globalThis as { DOMRect?: unknown };
  g.DOMRect ??= class DOMRect {
    constructor(
      public x = 0,
      public y = 0,
      public width = 0,
      public height = 0,
    ) {}
  };
  const spec = '@paulirish/trace_engine';
  const engine = (await import(spec)) as EngineModule;
  const model = engine.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  return model.parsedTrace().data;
}

/** The engine's flows (DevTools draws each as arrows between its events): each flow's events, in order. */
export async function traceEngineFlows(events: unknown[]): Promise<Array<Array<{ name: string; pid: number; tid: number; ts: number }>>> {
  return (await engineData(events)).Flows.flows;
}

/** Per pid, the process name the engine read (its process_name metadata events). */
export async function traceEngineProcessNames(events: unknown[]): Promise<Map<number, string | undefined>> {
  const names = (await engineData(events)).Meta.processNames;
  return new Map([...names].map(([pid, e]) => [pid, e.args?.name]));
}

/** Per pid and tid, every span in the engine's thread trees with the parent the tree gives it. */
export async function traceEngineProcesses(events: unknown[]): Promise<Map<number, Map<number, EngineNode[]>>> {
  const out = new Map<number, Map<number, EngineNode[]>>();
  for (const [pid, proc] of (await engineData(events)).Renderer.processes) {
    const threads = new Map<number, EngineNode[]>();
    out.set(pid, threads);
    for (const [tid, thread] of proc.threads) {
      const nodes: EngineNode[] = [];
      const walk = (n: TreeNode, parent: number): void => {
        const spanId = n.entry.args?.span_id ?? -1;
        nodes.push({ spanId, name: n.entry.name, parent });
        for (const c of n.children) walk(c, spanId);
      };
      for (const r of thread.tree?.roots ?? []) walk(r, 0);
      threads.set(tid, nodes);
    }
  }
  return out;
}

/**
 * Per tid, the path of every entry of the engine's thread tree: the names
 * from its root down to it (spans and, with a CPU profile, the calls the
 * engine placed under them).
 */
export async function traceEnginePaths(events: unknown[]): Promise<Map<number, string[][]>> {
  const g = globalThis as { DOMRect?: unknown };
  g.DOMRect ??= class DOMRect {};
  const spec = '@paulirish/trace_engine';
  const engine = (await import(spec)) as EngineModule;
  const model = engine.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  const out = new Map<number, string[][]>();
  for (const proc of model.parsedTrace().data.Renderer.processes.values()) {
    for (const [tid, thread] of proc.threads) {
      const paths: string[][] = [];
      const walk = (n: TreeNode, above: string[]): void => {
        const name = (n.entry as { callFrame?: { functionName?: string } }).callFrame?.functionName ?? n.entry.name;
        const path = [...above, name];
        paths.push(path);
        for (const c of n.children) walk(c, path);
      };
      for (const r of thread.tree?.roots ?? []) walk(r, []);
      out.set(tid, paths);
    }
  }
  return out;
}

// ---- speedscope ----

/** One call as speedscope's call tree has it: times in us relative to its profile's start. */
export interface SpeedscopeCall {
  name: string;
  start: number;
  end: number;
  parent: string | undefined;
}
export interface SpeedscopeResult {
  /** Per profile name (speedscope names a profile after its thread). */
  profiles: Map<string, SpeedscopeCall[]>;
  warnings: string[];
}

interface SsFrame {
  name: string;
}
interface SsNode {
  frame: SsFrame;
}
interface SsProfile {
  getName(): string;
  forEachCall(open: (n: SsNode, v: number) => void, close: (n: SsNode, v: number) => void): void;
}
interface SsImporters {
  importProfileGroupFromText(name: string, text: string): Promise<{ profiles: SsProfile[] } | null>;
}

let speedscope: { importers: Promise<SsImporters>; warnings: string[] } | undefined;

/**
 * speedscope ships only its web app, one bundle whose importer module is
 * internal. The bundle is run in a V8 context with inert browser globals,
 * up to the line that creates the importer module's promise, which is handed
 * out. Its console output (the importer's warnings) is collected.
 */
function loadSpeedscope(): { importers: Promise<SsImporters>; warnings: string[] } {
  if (speedscope) return speedscope;
  const pkg = createRequire(path.join(root, 'package.json')).resolve('speedscope/package.json');
  const dir = path.join(path.dirname(pkg), 'dist', 'release');
  const file = readdirSync(dir).find((f) => /^speedscope-.*\.js$/.test(f));
  if (file === undefined) throw new Error(`speedscope: no bundle in ${dir}`);
  let src = readFileSync(path.join(dir, file), 'utf8');
  const m = /var ([\w$]+)=Promise\.resolve\(\)\.then\(\(\)=>\(([\w$]+)\(\),([\w$]+)\)\);/.exec(src);
  if (!m) throw new Error('speedscope: the importer module was not found in the bundle');
  // The bundle then goes on to build and render the app: stop it there, so
  // nothing renders into the inert document later. The importer module and
  // everything it uses are defined above that line.
  const stop = '__hotspanStop';
  src = src.replace(m[0], `${m[0]}globalThis.__hotspanImporters=${m[1]};throw ${JSON.stringify(stop)};`);
  const warnings: string[] = [];
  const inert: object = new Proxy(function inert() {}, {
    get: (_t, p) => (p === Symbol.toPrimitive ? () => '' : inert),
    apply: () => inert,
    construct: () => inert,
  });
  const say = (...a: unknown[]): void => {
    warnings.push(a.map(String).join(' '));
  };
  const ctx: Record<string, unknown> = {
    console: { log: () => undefined, info: () => undefined, warn: say, error: say },
    setTimeout,
    clearTimeout,
    TextDecoder,
    TextEncoder,
    URL,
    document: inert,
    localStorage: inert,
    navigator: { userAgent: 'node' },
    location: { hash: '', search: '', href: '' },
    addEventListener: () => undefined,
    matchMedia: () => ({ matches: false, addEventListener: () => undefined }),
    requestAnimationFrame: () => 0,
  };
  ctx.globalThis = ctx;
  ctx.window = ctx;
  ctx.self = ctx;
  vm.createContext(ctx);
  try {
    vm.runInContext(src, ctx);
  } catch (e) {
    if (e !== stop) throw e;
  }
  const importers = ctx.__hotspanImporters as Promise<SsImporters>;
  speedscope = { importers, warnings };
  return speedscope;
}

/** speedscope's import of a Chrome JSON text: every call per profile, and the warnings it logged. */
export async function speedscopeImport(text: string): Promise<SpeedscopeResult> {
  const ss = loadSpeedscope();
  const importers = await ss.importers;
  ss.warnings.length = 0;
  const group = await importers.importProfileGroupFromText('trace.json', text);
  const warnings = ss.warnings.splice(0);
  const profiles = new Map<string, SpeedscopeCall[]>();
  for (const p of group?.profiles ?? []) {
    const calls: SpeedscopeCall[] = [];
    const stack: Array<{ name: string; start: number; parent: string | undefined }> = [];
    p.forEachCall(
      (n, v) => {
        stack.push({ name: n.frame.name, start: v, parent: stack[stack.length - 1]?.name });
      },
      (_n, v) => {
        const top = stack.pop();
        if (top) calls.push({ ...top, end: v });
      },
    );
    profiles.set(p.getName(), calls);
  }
  return { profiles, warnings };
}

// ---- protoc and protobufjs ----

/** `protoc --decode=perfetto.protos.Trace` of the bytes: its text format, or a thrown error with its stderr. */
export function protocDecode(bytes: Uint8Array): string {
  const r = spawnSync(toolBin('protoc'), [`--proto_path=${path.dirname(PERFETTO_PROTO)}`, '--decode=perfetto.protos.Trace', PERFETTO_PROTO], {
    input: bytes,
    maxBuffer: 256 << 20,
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`protoc --decode failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

let traceType: protobuf.Type | undefined;
/** The trace's packets decoded by protobufjs (toObject: camelCase, longs as strings, enums as names). */
export function protobufjsPackets<T>(bytes: Uint8Array): T[] {
  traceType ??= protobuf.loadSync(PERFETTO_PROTO).lookupType('perfetto.protos.Trace');
  const obj = traceType.toObject(traceType.decode(bytes), { longs: String, enums: String }) as { packet?: T[] };
  return obj.packet ?? [];
}
