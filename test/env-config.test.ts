// Settings from the environment (HOTSPAN_MEMORY_LIMIT, HOTSPAN_ON_FULL): a
// bad value gives one warning naming it and the default is kept, so a typo
// never stops a program from starting (`new Tracer()`, `--require` /
// `--import hotspan/auto`, `hotspan run`). The same value as an option throws.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Tracer } from '../lib/index';
import { cleanEnv } from './support/packed';
import { cliPath, repoRoot } from './support/trace-files';
import { restoreEnvAfterEach } from './support/env';

const MiB = 2 ** 20;
const BAD_LIMITS = ['-5', '0', 'abc', '1K', '100G', '1e9'];
const BAD_ON_FULL = ['bogus', 'Drop'];

restoreEnvAfterEach(['HOTSPAN_MEMORY_LIMIT', 'HOTSPAN_ON_FULL']);

/** The HOTSPAN_BAD_ENV warnings `fn` gives (emitWarning delivers them on the next tick). */
async function warningsOf(fn: () => void): Promise<string[]> {
  const seen: string[] = [];
  const on = (w: Error & { code?: string }): void => {
    if (w.code === 'HOTSPAN_BAD_ENV') seen.push(w.message);
  };
  process.on('warning', on);
  try {
    fn();
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', on);
  }
  return seen;
}

function escaped(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('environment settings in process', () => {
  for (const value of BAD_LIMITS) {
    it(`HOTSPAN_MEMORY_LIMIT=${value}: one warning naming it, the default budget`, async () => {
      process.env.HOTSPAN_MEMORY_LIMIT = value;
      delete process.env.HOTSPAN_ON_FULL;
      const limits: number[] = [];
      const seen = await warningsOf(() => {
        // Three tracers read the same value: still one warning.
        for (let i = 0; i < 3; i++) {
          const t = new Tracer({ backend: 'native' });
          limits.push(t.counts().memoryLimit);
          t.close();
        }
      });
      expect(limits).toEqual([256 * MiB, 256 * MiB, 256 * MiB]);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatch(new RegExp(`HOTSPAN_MEMORY_LIMIT .*"${escaped(value)}"`));
    });
  }

  for (const value of BAD_ON_FULL) {
    it(`HOTSPAN_ON_FULL=${value}: one warning naming it, 'overwrite'`, async () => {
      process.env.HOTSPAN_ON_FULL = value;
      delete process.env.HOTSPAN_MEMORY_LIMIT;
      let onFull = '';
      const seen = await warningsOf(() => {
        const t = new Tracer({ backend: 'js' });
        onFull = t.counts().onFull;
        t.close();
      });
      expect(onFull).toBe('overwrite');
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatch(new RegExp(`HOTSPAN_ON_FULL .*"${value}"`));
    });
  }

  it('the same values as options still throw, naming them', () => {
    expect(() => new Tracer({ memoryLimit: 1024 })).toThrow(/memoryLimit .*1024/);
    expect(() => new Tracer({ onFull: 'Drop' as never })).toThrow(/onFull .*Drop/);
  });

  it('an option given wins over a bad variable, which is then not read', async () => {
    process.env.HOTSPAN_MEMORY_LIMIT = 'lots';
    let limit = 0;
    const seen = await warningsOf(() => {
      const t = new Tracer({ backend: 'native', memoryLimit: 2 * MiB });
      limit = t.counts().memoryLimit;
      t.close();
    });
    expect(limit).toBe(2 * MiB);
    expect(seen).toEqual([]);
  });
});

describe('environment settings in a program being started', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-env-'));
  afterAll(() => {
    rmSync(tmp, { recursive: true, force: true });
  });

  function check(r: ReturnType<typeof spawnSync>, variable: string, value: string): void {
    const stderr = String(r.stderr);
    expect(r.status, stderr).toBe(0);
    expect(String(r.stdout)).toContain('the program ran');
    expect(stderr.split('[HOTSPAN_BAD_ENV]').length - 1, stderr).toBe(1);
    expect(stderr).toMatch(new RegExp(`${variable} .*"${escaped(value)}"`));
    expect(stderr).not.toMatch(/RangeError/);
  }

  for (const value of BAD_LIMITS) {
    it(`--require hotspan/auto with HOTSPAN_MEMORY_LIMIT=${value} runs the program and writes its trace`, () => {
      const out = path.join(tmp, `limit${value}.json`);
      const r = spawnSync(process.execPath, ['--require', path.join(repoRoot, 'dist', 'auto.js'), '-e', "console.log('the program ran')"], {
        encoding: 'utf8',
        env: cleanEnv({ HOTSPAN_MEMORY_LIMIT: value, HOTSPAN_OUT: out }),
      });
      check(r, 'HOTSPAN_MEMORY_LIMIT', value);
      expect(statSync(out).size).toBeGreaterThan(0);
    });
  }

  it('--import hotspan/auto with HOTSPAN_ON_FULL=Drop runs the program', () => {
    const out = path.join(tmp, 'import.json');
    const r = spawnSync(
      process.execPath,
      ['--import', pathToFileURL(path.join(repoRoot, 'esm', 'auto.mjs')).href, '-e', "console.log('the program ran')"],
      { encoding: 'utf8', env: cleanEnv({ HOTSPAN_ON_FULL: 'Drop', HOTSPAN_OUT: out }) },
    );
    check(r, 'HOTSPAN_ON_FULL', 'Drop');
    expect(statSync(out).size).toBeGreaterThan(0);
  });

  it('hotspan run with HOTSPAN_ON_FULL=bogus runs the program', () => {
    const out = path.join(tmp, 'run.pftrace');
    const r = spawnSync(
      process.execPath,
      [cliPath, 'run', '-o', out, '--no-report', '--', process.execPath, '-e', "console.log('the program ran')"],
      { encoding: 'utf8', env: cleanEnv({ HOTSPAN_ON_FULL: 'bogus' }) },
    );
    check(r, 'HOTSPAN_ON_FULL', 'bogus');
    expect(statSync(out).size).toBeGreaterThan(0);
  });
});
