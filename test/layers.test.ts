// The folder layers of lib/ and native/core (ARCHITECTURE.md, "A map of the
// folders"), checked by scripts/check-layers.mjs: no import circle, no file
// outside the named folders, no upward import or #include but the listed ones.
// The second case shows the check can fail: a copy of the tree with one new
// upward import is refused, naming it.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-layers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function check(top: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [path.join(top, 'scripts', 'check-layers.mjs')], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('the folder layers', () => {
  it('this tree: no circle, no stray folder, no new upward edge', () => {
    const r = check(root);
    expect(r.out).toContain('layers: ok');
    expect(r.out).toMatch(/lib: import circles: 0/);
    expect(r.out).toMatch(/native\/core \(includes\): import circles: 0/);
    expect(r.status).toBe(0);
  });

  it('a new upward import fails the check, named', () => {
    for (const dir of ['lib', 'native/core', 'scripts']) cpSync(path.join(root, dir), path.join(tmp, dir), { recursive: true });
    const file = path.join(tmp, 'lib', 'common', 'flags.ts');
    writeFileSync(file, `import { Tracer } from '../tracer/tracer';\nvoid Tracer;\n${readFileSync(file, 'utf8')}`);
    const r = check(tmp);
    expect(r.out).toContain('lib/common/flags.ts -> lib/tracer/tracer.ts NEW: not in KNOWN_UP');
    expect(r.status).toBe(1);
  });
});
