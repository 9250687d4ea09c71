// TracerOptions.processName: the name the written traces give the process
// (Chrome JSON's process_name metadata, Perfetto's process descriptor), on
// every write path of both engines (the addon's and the WebAssembly core's
// writers), and its default: what the process runs.
import { spawnSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { FORCE_LOAD_FAILURE_ENV, loadNativeAddon } from '../lib/binding/native-loader';
import { internals } from '../lib/tracer/internal';
import { defaultProcessName } from '../lib/tracer/options';
import { protobufjsPackets } from './support/consumers';
import { tracerFactory } from './support/tracers';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-procname-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined;

/** The process_name metadata events of a Chrome JSON file: pid and name. */
function jsonNames(file: string): Array<[number, string | undefined]> {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: Array<{ ph: string; name: string; pid: number; args?: { name?: string } }> };
  return doc.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => [e.pid, e.args?.name]);
}

/** The process descriptors of a Perfetto file: pid and name. */
function perfettoNames(file: string): Array<[number | undefined, string | undefined]> {
  const packets = protobufjsPackets<{ trackDescriptor?: { process?: { pid?: number; processName?: string } } }>(readFileSync(file));
  return packets.flatMap((p) => {
    const proc = p.trackDescriptor?.process;
    return proc === undefined || proc === null ? [] : [[proc.pid, proc.processName] as [number | undefined, string | undefined]];
  });
}

// Quotes, a backslash, a control character and non-ASCII: written escaped (JSON) or as UTF-8 (Perfetto), read back the same.
const NAME = 'api "srv"\\\t é 😀';

describe.each(['native', 'js'] as const)('%s backend: processName in every written trace', (kind) => {
  const suite = kind === 'native' && !native ? describe.skip : describe;
  suite('', () => {
    const make = tracerFactory(kind);
    const pid = kind === 'native' ? process.pid : 1;

    it('write() and dump(): Chrome JSON and Perfetto', async () => {
      const t = make({ processName: NAME });
      t.trace('work', () => undefined);
      const json = path.join(tmp, `${kind}-write.json`);
      const pf = path.join(tmp, `${kind}-write.pftrace`);
      await t.write(json);
      await t.dump(pf);
      expect(jsonNames(json)).toEqual([[pid, NAME]]);
      expect(perfettoNames(pf)).toEqual([[pid, NAME]]);
    });

    it("writeOnExit's write on this thread (the backend's writeFileNow)", () => {
      const t = make({ processName: NAME });
      t.trace('work', () => undefined);
      const json = path.join(tmp, `${kind}-now.json`);
      const pf = path.join(tmp, `${kind}-now.pftrace`);
      t.flush();
      const b = t[internals]().backend;
      b.writeFileNow(json, 'json');
      b.writeFileNow(pf, 'perfetto');
      expect(jsonNames(json)).toEqual([[pid, NAME]]);
      expect(perfettoNames(pf)).toEqual([[pid, NAME]]);
    });

    it('the default: what this process runs', async () => {
      const t = make();
      t.trace('work', () => undefined);
      const json = path.join(tmp, `${kind}-default.json`);
      await t.write(json);
      expect(jsonNames(json)).toEqual([[pid, defaultProcessName()]]);
      expect(defaultProcessName()).not.toBe('hotspan');
    });
  });
});

describe.runIf(native)('native backend: processName in a stream', () => {
  const make = tracerFactory('native');
  it('tracer.stream() names the process in its file', () => {
    const t = make({ processName: NAME });
    const file = path.join(tmp, 'stream.pftrace');
    const s = t.stream(file);
    t.trace('work', () => undefined);
    s.close();
    expect(perfettoNames(file)).toEqual([[process.pid, NAME]]);
  });
});

// hotspan/auto where the addon does not load (the js backend): its file at
// exit is the WebAssembly core's whole-document write (lib/auto/auto-file.ts),
// which names the process too.
describe('hotspan/auto on the js backend names the process by what it runs', () => {
  const AUTO = path.join(__dirname, '..', 'dist', 'auto.js');
  it.each(['json', 'pftrace'] as const)('%s', (ext) => {
    const script = path.join(tmp, 'named-app.js');
    writeFileSync(script, `require(${JSON.stringify(AUTO)}).tracer.trace('work', () => 1);\n`);
    const out = path.join(tmp, `auto-js.${ext}`);
    const env: NodeJS.ProcessEnv = { ...process.env, HOTSPAN_OUT: out, [FORCE_LOAD_FAILURE_ENV]: '1' };
    for (const k of ['HOTSPAN_OUT_PID', 'HOTSPAN_PARTS_DIR', 'HOTSPAN_TRACE_ORIGIN_NS', 'NODE_OPTIONS', 'HOTSPAN_CPU_PROFILE', 'TRACEPARENT']) delete env[k];
    const r = spawnSync(process.execPath, ['-r', AUTO, script], { env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/using the js backend/); // the fallback said so
    expect(ext === 'json' ? jsonNames(out) : perfettoNames(out)).toEqual([[1, 'named-app.js']]);
  });
});

describe('defaultProcessName', () => {
  const proc = (argv: string[], execArgv: string[] = [], title = 'node'): { argv: string[]; execArgv: string[]; title: string } => ({ argv, execArgv, title });
  it("is the main script's file name", () => {
    expect(defaultProcessName(proc(['/usr/bin/node', '/srv/app/server.js', '--port', '80']))).toBe('server.js');
  });
  it('is process.title without a script, or when the program is -e / -p text', () => {
    expect(defaultProcessName(proc(['/usr/bin/node']))).toBe('node');
    expect(defaultProcessName(proc(['/usr/bin/node', 'an-arg'], ['-e', 'code']))).toBe('node');
    expect(defaultProcessName(proc(['/usr/bin/node', 'an-arg'], ['--eval=code']))).toBe('node');
    expect(defaultProcessName(proc(['/usr/bin/node', 'an-arg'], ['-p', '1']))).toBe('node');
    expect(defaultProcessName(proc(['/usr/bin/node'], [], ''))).toBe('node');
  });
  it('names a cluster worker by its script and worker id (cluster.worker.id)', () => {
    expect(defaultProcessName(proc(['/usr/bin/node', '/srv/app/server.js']), 3)).toBe('server.js (worker 3)');
  });
  it('is cut to 256 characters', () => {
    expect(defaultProcessName(proc(['/usr/bin/node', `/srv/${'x'.repeat(300)}.js`]))).toBe('x'.repeat(256));
  });
});
