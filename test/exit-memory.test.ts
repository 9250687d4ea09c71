// The exit writes (writeOnExit at exit, dumpOnCrash at an uncaught exception)
// stream the trace in bounded memory, as write() does, instead of building
// the whole document first: the peak RSS the write adds stays far below the
// document's size, and a process under a memory cgroup that fits the budget
// writes its whole trace and keeps its exit code instead of being OOM-killed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { readTrace } from '../lib/cli/read-trace';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { repoRoot } from './support/trace-files';

const MiB = 2 ** 20;
const child = path.join(__dirname, 'fixtures', 'exit-memory-child.js');
const autoChild = path.join(__dirname, 'fixtures', 'exit-memory-auto-child.js');
const dist = path.join(repoRoot, 'dist');
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-exit-memory-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined;

interface ChildReport {
  before: number;
  after: number;
  kept: number;
}

/** The child's report line (Node prints the crash's stack after it). */
function lastReport(stderr: string): ChildReport {
  const line = stderr.split('\n').filter((l) => l.startsWith('{"before"')).pop();
  if (line === undefined) throw new Error(`the child printed no report:\n${stderr}`);
  return JSON.parse(line) as ChildReport;
}

/** Spans in a trace file, read in chunks as `hotspan report` reads it, and whether it was whole. */
function spansIn(file: string): { spans: number; truncated: boolean } {
  let spans = 0;
  const s = readTrace(file, { timeline: () => {}, span: () => void spans++ });
  return { spans, truncated: s.truncated };
}

/**
 * A memory cgroup of this process's own (v2, else v1), nested in the one it
 * runs in, or why there is none. Nested, so it only narrows what the
 * enclosing cgroup allows.
 */
function memoryCgroup(): { dir: string; version: 1 | 2 } | { why: string } {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch (e) {
    return { why: `no /proc/self/cgroup (${(e as Error).message})` };
  }
  const name = `hotspan-test-${String(process.pid)}`;
  const v1 = lines.map((l) => l.split(':')).find(([, ctl]) => ctl.split(',').includes('memory'));
  const v2 = lines.map((l) => l.split(':')).find(([id]) => id === '0');
  const tries: Array<{ dir: string; version: 1 | 2; limit: string }> = [];
  if (v2 !== undefined && existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    tries.push({ dir: path.join('/sys/fs/cgroup', v2[2], name), version: 2, limit: 'memory.max' });
  }
  if (v1 !== undefined) tries.push({ dir: path.join('/sys/fs/cgroup/memory', v1[2], name), version: 1, limit: 'memory.limit_in_bytes' });
  const why: string[] = [];
  for (const t of tries) {
    try {
      mkdirSync(t.dir);
    } catch (e) {
      why.push(`cgroup v${String(t.version)}: ${(e as Error).message}`);
      continue;
    }
    if (existsSync(path.join(t.dir, t.limit))) return { dir: t.dir, version: t.version };
    rmdirSync(t.dir);
    why.push(`cgroup v${String(t.version)}: no ${t.limit} in ${t.dir} (memory controller not enabled there)`);
  }
  return { why: why.length > 0 ? why.join('; ') : 'no memory cgroup hierarchy (v1 or v2) mounted' };
}

/** Runs the child inside the cgroup, capped at `cap` bytes (no swap). */
function runCapped(cg: { dir: string; version: 1 | 2 }, cap: number, args: string[]): ReturnType<typeof spawnSync> {
  if (cg.version === 2) {
    writeFileSync(path.join(cg.dir, 'memory.max'), String(cap));
    if (existsSync(path.join(cg.dir, 'memory.swap.max'))) writeFileSync(path.join(cg.dir, 'memory.swap.max'), '0');
  } else {
    // memsw (memory + swap) must be at least the memory limit: set it after, when it exists.
    writeFileSync(path.join(cg.dir, 'memory.limit_in_bytes'), String(cap));
    const memsw = path.join(cg.dir, 'memory.memsw.limit_in_bytes');
    if (existsSync(memsw)) writeFileSync(memsw, String(cap));
  }
  // The shell joins the cgroup, then becomes node.
  return spawnSync('sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg.dir, process.execPath, child, ...args], {
    encoding: 'utf8',
    timeout: 300_000,
  });
}

describe.skipIf(!native)('exit writes in bounded memory (native backend)', () => {
  const BUDGET_MIB = 48;
  for (const [mode, file] of [
    ['exit', 'exit.json'],
    ['exit', 'exit.pftrace'],
    ['crash', 'crash.pftrace'],
  ] as const) {
    it(`${mode === 'exit' ? 'writeOnExit' : 'dumpOnCrash'} to ${file}: the peak RSS grows by far less than the document`, () => {
      const out = path.join(tmp, file);
      const r = spawnSync(process.execPath, [child, dist, mode, out, String(BUDGET_MIB)], { encoding: 'utf8', timeout: 300_000 });
      expect(r.status, r.stderr).toBe(mode === 'crash' ? 1 : 0);
      const rep = lastReport(r.stderr);
      const grew = rep.after - rep.before;
      const size = statSync(out).size;
      // The document is several times the budget (28-byte records become
      // ~60-byte packets or ~140-byte JSON events); building it whole grows
      // the peak by more than its size. The streaming write needs its few
      // 1 MiB blocks and 4 bytes a record kept (the Perfetto writer's order).
      expect(size).toBeGreaterThan(BUDGET_MIB * MiB);
      expect(grew, `peak grew ${String(grew)} bytes writing ${String(size)}`).toBeLessThan((BUDGET_MIB * MiB) / 2);
      expect(spansIn(out)).toEqual({ spans: rep.kept, truncated: false });
      rmSync(out);
    }, 300_000);
  }

  it('hotspan/auto to auto.pftrace: the peak RSS grows by far less than the document, the file is whole', () => {
    const out = path.join(tmp, 'auto.pftrace');
    const r = spawnSync(process.execPath, ['--require', path.join(dist, 'auto.js'), autoChild, dist], {
      encoding: 'utf8',
      timeout: 300_000,
      env: {
        ...process.env,
        HOTSPAN_OUT: out,
        HOTSPAN_MEMORY_LIMIT: String(BUDGET_MIB * MiB),
        HOTSPAN_ON_FULL: 'drop',
        HOTSPAN_INSTRUMENT: 'gc',
      },
    });
    expect(r.status, r.stderr).toBe(0);
    const rep = lastReport(r.stderr);
    const grew = rep.after - rep.before;
    const size = statSync(out).size;
    expect(size).toBeGreaterThan(BUDGET_MIB * MiB);
    expect(grew, `peak grew ${String(grew)} bytes writing ${String(size)}`).toBeLessThan((BUDGET_MIB * MiB) / 2);
    // Whole, and every span it counts as kept is in it; the budget dropped some, counted.
    let spans = 0;
    const s = readTrace(out, { timeline: () => {}, span: () => void spans++ });
    expect(s.truncated).toBe(false);
    const { produced = -1, kept = -1, dropped = -1, overwritten = -1 } = s.counts ?? {};
    expect(spans).toBe(kept);
    expect(dropped).toBeGreaterThan(0);
    expect(produced).toBe(kept + dropped + overwritten);
    rmSync(out);
  }, 300_000);

  const cg = memoryCgroup();
  // Under a sanitizer run (native/test/sanitizers.sh) the child carries the
  // sanitizer's shadow memory and quarantine, which no cap sized for the
  // program fits; the peak RSS tests above still run there.
  const sanitizer = process.env.HOTSPAN_TEST_PRELOAD;
  const usable = 'dir' in cg && !sanitizer;
  afterAll(() => {
    if ('dir' in cg) rmdirSync(cg.dir);
  });
  const CAP_BUDGET_MIB = 32;
  // Node's own ~50 MiB, the budget, and room for the write, but not for a
  // JSON document built whole (about 5x the budget; Perfetto's 2.5x can
  // squeeze in, so both capped runs write JSON).
  const cap = 2 * CAP_BUDGET_MIB * MiB + 64 * MiB;
  const why = sanitizer ? `a sanitizer run (${sanitizer}) needs more memory than the cap` : 'why' in cg ? `no memory cgroup to cap a child with: ${cg.why}` : '';
  const skipNote = usable ? '' : ` (SKIPPED: ${why}; the peak RSS tests above check the bound)`;
  for (const [mode, file] of [
    ['exit', 'capped.json'],
    ['crash', 'capped-crash.json'],
  ] as const) {
    it.skipIf(!usable)(`under a ${String(cap / MiB)} MiB memory cgroup, ${mode === 'exit' ? 'writeOnExit' : 'dumpOnCrash'} writes the whole trace and the exit code stays the program's${skipNote}`, () => {
      if (!('dir' in cg)) return;
      const out = path.join(tmp, file);
      const r = runCapped(cg, cap, [dist, mode, out, String(CAP_BUDGET_MIB)]);
      expect(r.signal, String(r.stderr)).toBe(null);
      expect(r.status, String(r.stderr)).toBe(mode === 'crash' ? 1 : 0);
      if (mode === 'crash') expect(String(r.stderr)).toContain('Error: the crash under test');
      const rep = lastReport(String(r.stderr));
      expect(spansIn(out)).toEqual({ spans: rep.kept, truncated: false });
      rmSync(out);
    }, 300_000);
  }
});
