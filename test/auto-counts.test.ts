// Files written by hotspan/auto carry the recording counts, as write() and
// writeOnExit files do: `hotspan report` of a file from `hotspan run`
// (--require) and from `node --import hotspan/auto` prints them, exact for a
// program whose spans are known: N server and N client spans from N HTTP
// requests (the http instrument alone), and M spans of its own in the
// automatic tracer.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

import { cliPath, repoRoot } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-counts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const REQUESTS = 25;
const OWN = 7;
const AUTO = path.join(repoRoot, 'dist', 'auto.js');

const APP = `
const http = require('node:http');
const { tracer } = require(${JSON.stringify(AUTO)});
for (let i = 0; i < ${OWN}; i++) tracer.trace('own', () => i);
const server = http.createServer((req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  for (let i = 0; i < ${REQUESTS}; i++) {
    await new Promise((resolve, reject) => http.get({ host: '127.0.0.1', port, path: '/r/' + i }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject));
  }
  server.close();
});
`;
const app = path.join(tmp, 'app.js');
writeFileSync(app, APP);

function report(file: string): string {
  const r = spawnSync(process.execPath, [cliPath, 'report', file], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

const total = 2 * REQUESTS + OWN;

describe('files written by hotspan/auto carry the recording counts', () => {
  for (const ext of ['pftrace', 'json']) {
    it(`hotspan run (.${ext})`, () => {
      const out = path.join(tmp, `run.${ext}`);
      const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '-i', 'http', '--no-report', '--', process.execPath, app], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.status, r.stderr).toBe(0);
      const text = report(out);
      expect(text).not.toContain('recording counts: unknown');
      expect(text).toContain('lost while recording: dropped 0, overwritten 0\n');
      expect(text).toContain(`recorded: produced ${String(total)}, kept ${String(total)}, released 0\n`);
    }, 120_000);
  }

  it('node --import hotspan/auto', () => {
    const out = path.join(tmp, 'import.pftrace');
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(path.join(repoRoot, 'esm', 'auto.mjs')).href, app], {
      encoding: 'utf8',
      env: { ...process.env, HOTSPAN_OUT: out, HOTSPAN_INSTRUMENT: 'http' },
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(report(out)).toContain(`recorded: produced ${String(total)}, kept ${String(total)}, released 0\n`);
  }, 120_000);
});
