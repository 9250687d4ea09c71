// hotspan/auto's periodic flush (lib/auto/auto-flush.ts) rewrites the file
// only when something was recorded since the last flush. A process that
// records one span and then idles, flushing every 10 ms, keeps the file its
// first flush wrote: the same inode (each flush renames a new file over it),
// however long it idles. Without the rule it would be rewritten about every
// 10 ms.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { repoRoot } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-flush-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const CHILD = `
const fs = require('node:fs');
const out = process.env.HOTSPAN_OUT;
require('node:dns').lookup('localhost', async () => {
  // Until a flush has written the lookup's span.
  while (!(fs.existsSync(out) && fs.readFileSync(out, 'utf8').includes('dns.lookup'))) await new Promise((r) => setTimeout(r, 5));
  const first = fs.statSync(out).ino;
  await new Promise((r) => setTimeout(r, 400));
  process.stdout.write(JSON.stringify({ same: fs.statSync(out).ino === first }));
});
`;

describe('the periodic flush', () => {
  it('does not rewrite the file while nothing new was recorded', () => {
    const out = path.join(tmp, 'idle.json');
    const r = spawnSync(process.execPath, ['--require', path.join(repoRoot, 'dist', 'auto.js'), '-e', CHILD], {
      encoding: 'utf8',
      env: { ...process.env, HOTSPAN_OUT: out, HOTSPAN_FLUSH_MS: '10', HOTSPAN_INSTRUMENT: 'dns' },
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ same: true });
  });
});
