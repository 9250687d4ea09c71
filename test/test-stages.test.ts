// scripts/test-stages.mjs, behind npm test and npm run test:all: a stage whose
// tool is missing is SKIPPED with its reason in npm test and fails under
// test:all; the summary lists every stage, and the tools whose cases a stage
// skipped; the last line counts them. Runs
// only stages that finish at once (the wasm digest, a missing compiler).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');

/** The run's stdout lines (its stderr, where failures explain themselves, apart). */
function stages(args: string[], env: Record<string, string> = {}): { status: number | null; lines: string[]; stderr: string } {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['CI', 'HOTSPAN_REQUIRE_TOOLS']) delete base[k];
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'test-stages.mjs'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...base, HOTSPAN_WASM_CXX: '/nonexistent/clang++-16', ...env },
  });
  return { status: r.status, lines: r.stdout.trimEnd().split('\n'), stderr: r.stderr };
}

describe('the test stage runner', () => {
  it('npm test: a stage without its tool is SKIPPED (why); the others pass; the last line counts', () => {
    const r = stages(['--only', 'wasm digest,wasm rebuild']);
    expect(r.lines).toContain('== wasm rebuild: SKIPPED (clang++-16 or the wasm32-wasi libc++ not found (apt-get install clang-16 lld-16 libc++-16-dev-wasm32 libc++abi-16-dev-wasm32 libclang-rt-16-dev-wasm32 wasi-libc))');
    const summary = r.lines.slice(r.lines.indexOf('== summary (npm test)') + 1);
    expect(summary[0]).toMatch(/^wasm digest {3}passed in \d+ s$/);
    expect(summary[1]).toMatch(/^wasm rebuild {2}SKIPPED \(clang\+\+-16 or the wasm32-wasi libc\+\+ not found/);
    expect(summary.slice(2)).toEqual(['1 skipped', '1 passed, 0 failed']);
    expect(r.status).toBe(0);
  });

  for (const [how, args, env] of [
    ['test:all', ['--all'], {}],
    ['CI=true', [], { CI: 'true' }],
  ] as Array<[string, string[], Record<string, string>]>) {
    it(`${how}: the same missing tool fails its stage and the run`, () => {
      const r = stages([...args, '--only', 'wasm digest,wasm rebuild'], env);
      expect(r.lines.some((l) => /^wasm rebuild {2}failed \(clang\+\+-16 or the wasm32-wasi libc\+\+ not found/.test(l))).toBe(true);
      expect(r.stderr).toContain('tools are required under test:all, CI=true and HOTSPAN_REQUIRE_TOOLS=1');
      expect(r.lines.at(-1)).toBe('1 passed, 1 failed');
      expect(r.status).toBe(1);
    });
  }

  // Once package.json has a docs:check script, the stage runs it instead.
  const hasDocsCheck = Boolean((JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts?.['docs:check']);
  it.skipIf(hasDocsCheck)('a stage that is not a tool (docs check without its script) is SKIPPED even under test:all', () => {
    const r = stages(['--all', '--only', 'docs check']);
    expect(r.lines).toContain('docs check  SKIPPED (no docs:check script in package.json)');
    expect(r.lines.at(-1)).toBe('0 passed, 0 failed');
    expect(r.status).toBe(0);
  });

  it('a stage that passed with cases skipped for a missing tool says which, and why, in the summary', () => {
    // An npm on PATH that prints test/support/tools.ts's line (twice, as two
    // vitest processes would, split across writes) and passes.
    const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-stages-'));
    try {
      const npm = path.join(dir, 'npm');
      const line = 'SKIPPED the cases that need postgres: postgres not found at postgres (apt-get install postgresql, or set HOTSPAN_POSTGRES)';
      writeFileSync(npm, `#!/bin/sh\necho "stderr | test/auto-pg.test.ts"\nprintf '%s' "${line.slice(0, 20)}"\necho "${line.slice(20)}"\necho "${line}"\nexit 0\n`);
      chmodSync(npm, 0o755);
      const r = stages(['--only', 'typecheck'], { PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` });
      const summary = r.lines.slice(r.lines.indexOf('== summary (npm test)') + 1);
      expect(summary[0]).toMatch(/^typecheck {2}passed in \d+ s$/);
      expect(summary[1].trim()).toBe('cases that need postgres SKIPPED: postgres not found at postgres (apt-get install postgresql, or set HOTSPAN_POSTGRES)');
      expect(summary.slice(2)).toEqual(['1 stage(s) skipped cases for a missing tool', '1 passed, 0 failed']);
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a failed stage: its last 50 lines of output are printed again above the summary', () => {
    // An npm on PATH that prints 80 numbered lines and fails. (One stream: how
    // stdout and stderr interleave in the kept lines depends on scheduling.)
    const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-stages-'));
    try {
      const npm = path.join(dir, 'npm');
      writeFileSync(npm, '#!/bin/sh\nfor i in $(seq 1 80); do echo "line $i"; done\nexit 3\n');
      chmodSync(npm, 0o755);
      const r = stages(['--only', 'typecheck'], { PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` });
      const again = r.lines.indexOf('== typecheck failed; its last lines again:');
      const summary = r.lines.indexOf('== summary (npm test)');
      expect(again).toBeGreaterThan(0);
      expect(summary).toBeGreaterThan(again);
      const shown = r.lines.slice(again + 1, summary).filter((l) => l !== '');
      expect(shown).toEqual(Array.from({ length: 50 }, (_, i) => `line ${String(i + 31)}`));
      expect(r.lines.at(-2)).toBe('typecheck  failed (exit 3) in 0 s');
      expect(r.status).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unknown stage name is refused, naming it and the stages', () => {
    const r = stages(['--only', 'vitset']);
    expect(r.stderr).toContain('test-stages: unknown stage "vitset"; stages: typecheck, wasm digest, vitest, wasm rebuild');
    expect(r.status).toBe(2);
  });
});

describe('the vitest file sets', () => {
  it('every file vitest.config.mts names exists (a renamed test file would silently leave a set)', () => {
    const config = readFileSync(path.join(root, 'vitest.config.mts'), 'utf8');
    // Named whole ('test/x.test.ts') or by t(['x', ...]).
    const whole = [...config.matchAll(/'(test\/[\w.-]+\.test\.ts)'/g)].map((m) => m[1]!);
    const short = [...config.matchAll(/\bt\(\[([^\]]*)\]\)/g)].flatMap((m) => [...m[1]!.matchAll(/'([\w.-]+)'/g)].map((n) => `test/${n[1]!}.test.ts`));
    const named = [...whole, ...short];
    expect(short.length).toBeGreaterThan(30);
    expect(named.filter((f) => !existsSync(path.join(root, f)))).toEqual([]);
  });
});
