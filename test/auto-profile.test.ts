// HOTSPAN_CPU_PROFILE (hotspan/auto) and `hotspan run --cpu-profile`: the
// program's main-thread CPU samples in the trace beside the automatic spans,
// in both formats; bad values named. Checks use which functions were sampled,
// not how many samples there are (a busy machine takes fewer).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { cpuProfileInterval } from '../lib/auto/auto-profile';
import { readTrace } from '../lib/cli/read-trace';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { cliPath, repoRoot } from './support/trace-files';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-profile-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// A server whose handler burns 30 ms in busyHandler, asked 5 times; V8 samples that function.
const APP = `
const http = require('node:http');
function busyHandler() {
  const end = performance.now() + 30;
  let x = 0;
  while (performance.now() < end) for (let i = 0; i < 20000; i++) x = (x * 31 + i) | 0;
  return x;
}
const server = http.createServer((req, res) => { busyHandler(); res.end('ok'); });
server.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  for (let i = 0; i < 5; i++) await (await fetch('http://127.0.0.1:' + port + '/')).text();
  server.close();
});
`;
const app = path.join(tmp, 'app.js');
writeFileSync(app, APP);
const auto = path.join(repoRoot, 'dist', 'auto.js');

/** The sampled top functions of a trace file, by count. */
function sampled(file: string): Map<string, number> {
  const out = new Map<string, number>();
  readTrace(file, {
    timeline: () => undefined,
    span: () => undefined,
    sample: (_tl, _ts, f) => out.set(f.function, (out.get(f.function) ?? 0) + 1),
  });
  return out;
}

function hotspanRun(out: string, flags: string[]): ReturnType<typeof spawnSync> {
  return spawnSync(process.execPath, [cliPath, 'run', '-o', out, '--no-report', ...flags, '--', process.execPath, app], {
    encoding: 'utf8',
    timeout: 120_000,
  });
}

function autoRun(out: string, value: string | undefined): ReturnType<typeof spawnSync> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOTSPAN_OUT: out };
  delete env.HOTSPAN_CPU_PROFILE;
  if (value !== undefined) env.HOTSPAN_CPU_PROFILE = value;
  return spawnSync(process.execPath, ['--require', auto, app], { encoding: 'utf8', env, timeout: 120_000 });
}

describe('HOTSPAN_CPU_PROFILE values', () => {
  it('reads off, on and an interval; names a bad value', () => {
    for (const off of [undefined, '', '0', 'false', ' 0 ']) expect(cpuProfileInterval(off)).toBeUndefined();
    expect(cpuProfileInterval('1')).toBe(1000);
    expect(cpuProfileInterval('true')).toBe(1000);
    expect(cpuProfileInterval('250')).toBe(250);
    expect(() => cpuProfileInterval('abc')).toThrow(new TypeError('HOTSPAN_CPU_PROFILE must be 1, 0 or a sampling interval in us, got "abc"'));
    expect(() => cpuProfileInterval('1.5')).toThrow(/got "1\.5"/);
    expect(() => cpuProfileInterval('5')).toThrow(new RangeError('HOTSPAN_CPU_PROFILE: intervalUs must be an integer from 10 to 1000000, got 5'));
    expect(() => cpuProfileInterval('2000000')).toThrow(RangeError);
  });
});

describe.skipIf(skipNative)('CPU samples from hotspan/auto', () => {
  for (const ext of ['pftrace', 'json']) {
    it(`hotspan run --cpu-profile=200 puts the handler's samples in the .${ext}`, () => {
      const out = path.join(tmp, `run.${ext}`);
      const r = hotspanRun(out, ['--cpu-profile=200']);
      expect(r.status, String(r.stderr)).toBe(0);
      expect(sampled(out).get('busyHandler') ?? 0).toBeGreaterThan(0);
    });
  }

  it('hotspan run --cpu-profile alone samples at the default interval', () => {
    const out = path.join(tmp, 'default.pftrace');
    const r = hotspanRun(out, ['--cpu-profile']);
    expect(r.status, String(r.stderr)).toBe(0);
    expect(sampled(out).get('busyHandler') ?? 0).toBeGreaterThan(0);
  });

  it('hotspan run names a bad --cpu-profile value and runs nothing', () => {
    for (const bad of ['5', 'abc', '0', '']) {
      const out = path.join(tmp, `bad-${bad}.pftrace`);
      const r = hotspanRun(out, [`--cpu-profile=${bad}`]);
      expect(r.status).toBe(2);
      expect(String(r.stderr)).toContain(`--cpu-profile takes a sampling interval in microseconds, an integer from 10 to 1000000, got "${bad}"`);
    }
  });

  it('HOTSPAN_CPU_PROFILE=1 samples; unset samples nothing', () => {
    const on = path.join(tmp, 'env-on.json');
    const r = autoRun(on, '1');
    expect(r.status, String(r.stderr)).toBe(0);
    expect(sampled(on).get('busyHandler') ?? 0).toBeGreaterThan(0);
    const off = path.join(tmp, 'env-off.json');
    expect(autoRun(off, undefined).status).toBe(0);
    expect(sampled(off).size).toBe(0);
  });

  it('a bad HOTSPAN_CPU_PROFILE is a warning naming it; the program and its spans go on', () => {
    const out = path.join(tmp, 'env-bad.pftrace');
    const r = autoRun(out, 'often');
    expect(r.status).toBe(0);
    expect(String(r.stderr)).toContain('hotspan/auto: HOTSPAN_CPU_PROFILE must be 1, 0 or a sampling interval in us, got "often"; not profiling');
    expect(sampled(out).size).toBe(0);
    let spans = 0;
    readTrace(out, { timeline: () => undefined, span: () => spans++ });
    expect(spans).toBeGreaterThan(0);
  });
});
