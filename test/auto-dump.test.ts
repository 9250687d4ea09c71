// hotspan/auto's triggered dumps (docs/sampling.md), turned on by the
// HOTSPAN_DUMP_* variables: a root span (here each request's server span, and
// its client span, made outside any request) that fails (a 500 answer,
// flagged error) or is slower than HOTSPAN_DUMP_SLOWER_THAN_MS writes a numbered file
// holding its span and the spans under it, named by the process's pid and
// name, with its stderr line; HOTSPAN_DUMP_MAX_PER_MINUTE suppresses and
// counts the rest; a bad value gives one warning naming it and keeps the
// default. The program waits for the dumps on their counts (every trigger
// is written or suppressed once due), not on time.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { repoRoot } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-dump-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const AUTO = path.join(repoRoot, 'dist', 'auto.js');

// GET /ok answers 200, /fail 500, /slow 200 after a busy 600 ms; the paths come in argv, in order.
const APP = `
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { tracer } = require(${JSON.stringify(AUTO)});
const server = http.createServer((req, res) => {
  if (req.url === '/slow') { const end = performance.now() + 600; while (performance.now() < end); }
  res.statusCode = req.url === '/fail' ? 500 : 200;
  res.end('x');
});
server.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  const paths = process.argv.slice(2);
  for (const p of paths) {
    await new Promise((resolve, reject) => http.get({ host: '127.0.0.1', port, path: p }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject));
  }
  const expected = Number(process.env.TRIGGERS);
  const done = () => { const c = tracer.counts().dumpOn; return c !== undefined && c.written + c.suppressed + c.failed >= expected; };
  while (!done()) await new Promise((r) => setImmediate(r));
  process.stdout.write(JSON.stringify(tracer.counts().dumpOn));
  server.close();
});
`;
const app = path.join(tmp, 'app.js');
writeFileSync(app, APP);

interface Run {
  dir: string;
  counts: unknown;
  lines: string[];
  warnings: string[];
  pid: number;
}

function run(env: Record<string, string>, paths: string[], triggers: number): Run {
  const dir = mkdtempSync(path.join(tmp, 'case-'));
  const r = spawnSync(process.execPath, ['--require', AUTO, app, ...paths], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, HOTSPAN_OUT: path.join(dir, 'out.json'), HOTSPAN_INSTRUMENT: 'http', TRIGGERS: String(triggers), ...env },
  });
  expect(r.status, r.stderr).toBe(0);
  const stderr = r.stderr.split('\n');
  return {
    dir,
    counts: JSON.parse(r.stdout) as unknown,
    lines: stderr.filter((l) => l.startsWith('hotspan: dumpOn')),
    warnings: stderr.filter((l) => l.includes('HotspanWarning')),
    pid: r.pid ?? 0,
  };
}

type Doc = { traceEvents: Array<{ ph: string; name: string; pid: number; args?: Record<string, unknown> }> };
const dumps = (dir: string): string[] => readdirSync(dir).filter((f) => f.includes('dump')).sort();

describe('hotspan/auto: HOTSPAN_DUMP_*', () => {
  it('a failed request writes one dump with its server span, named by the process; the others are suppressed past the limit', () => {
    const r = run(
      { HOTSPAN_DUMP_ERRORS: 'true', HOTSPAN_DUMP_PATH: 'dump.json', HOTSPAN_DUMP_MAX_PER_MINUTE: '1' },
      ['/ok', '/fail', '/ok', '/fail', '/fail'],
      6,
    );
    // Each /fail: its server span and its client span, both flagged error.
    expect(r.counts).toEqual({ written: 1, suppressed: 5, failed: 0 });
    expect(dumps(r.dir)).toEqual(['dump-1.json']);
    const doc = JSON.parse(readFileSync(path.join(r.dir, 'dump-1.json'), 'utf8')) as Doc;
    const servers = doc.traceEvents.filter((e) => e.ph === 'b' && e.name === 'GET');
    expect(servers.map((s) => s.args?.['http.response.status_code'])).toContain(500);
    expect(new Set(doc.traceEvents.map((e) => e.pid))).toEqual(new Set([r.pid]));
    expect(doc.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => e.args?.name)).toEqual(['app.js']);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^hotspan: dumpOn: wrote \d+ spans of the last 10000 ms to dump-1\.json: span "GET" ended flagged error$/);
    expect(r.warnings).toEqual([]);
  }, 120_000);

  it('a request slower than HOTSPAN_DUMP_SLOWER_THAN_MS writes a dump; bad values warn once each, naming them, and keep the defaults', () => {
    const r = run(
      { HOTSPAN_DUMP_SLOWER_THAN_MS: '300', HOTSPAN_DUMP_WINDOW_MS: 'ten', HOTSPAN_DUMP_PATH: 'dump.txt', HOTSPAN_DUMP_ERRORS: 'yes' },
      ['/slow', '/fail'],
      2,
    );
    // /slow: its server span and its client span; /fail is no trigger (HOTSPAN_DUMP_ERRORS' bad value: false).
    expect(r.counts).toEqual({ written: 2, suppressed: 0, failed: 0 });
    // The default path (HOTSPAN_DUMP_PATH's value has no known extension): hotspan-<pid>-dump.pftrace, numbered.
    expect(dumps(r.dir)).toEqual([1, 2].map((n) => `hotspan-${String(r.pid)}-dump-${String(n)}.pftrace`));
    expect(r.lines).toHaveLength(2);
    for (const line of r.lines) expect(line).toMatch(/^hotspan: dumpOn: wrote \d+ spans of the last 10000 ms to .*: span "GET" took \d+\.\d ms \(slowerThanMs 300\)$/);
    expect(r.warnings).toHaveLength(3);
    for (const name of ['HOTSPAN_DUMP_WINDOW_MS', 'HOTSPAN_DUMP_PATH', 'HOTSPAN_DUMP_ERRORS']) {
      expect(r.warnings.filter((w) => w.includes(name))).toHaveLength(1);
    }
  }, 120_000);

  it('without HOTSPAN_DUMP_SLOWER_THAN_MS or HOTSPAN_DUMP_ERRORS nothing is dumped', () => {
    const dir = mkdtempSync(path.join(tmp, 'none-'));
    const r = spawnSync(process.execPath, ['--require', AUTO, '-e', "process.stdout.write(String(require(process.env.AUTO).tracer.counts().dumpOn))"], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, AUTO, HOTSPAN_OUT: path.join(dir, 'out.json'), HOTSPAN_INSTRUMENT: 'http', HOTSPAN_DUMP_PATH: 'dump.json' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('undefined');
  });
});
