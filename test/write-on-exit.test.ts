// new Tracer({ writeOnExit }) in child processes: the file is complete after a
// normal exit, process.exit(code), SIGINT and SIGTERM (the exit code or signal
// unchanged), an uncaught exception (reported, exit code 1), and when the
// program handles SIGINT itself; bad paths are refused up front.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { runChild, type ChildResult } from './support/child-run';
import { readSpans, repoRoot } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-exit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined;

/** Runs `body` after a tracer with writeOnExit recorded 3 spans; `signal` is sent once the child prints "ready". */
function child(backend: string, out: string, body: string, signal?: NodeJS.Signals): Promise<ChildResult> {
  const script = `
    const { Tracer } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'index.js'))});
    const t = new Tracer({ backend: ${JSON.stringify(backend)}, writeOnExit: ${JSON.stringify(out)} });
    t.trace('a', () => t.trace('b', () => 1));
    t.trace('c', () => 2);
    ${body}`;
  return runChild(script, { steps: signal === undefined ? [] : [{ marker: 'ready', signal }] });
}

function spansIn(file: string): string[] {
  expect(existsSync(file), `${file} written`).toBe(true);
  const r = readSpans(file);
  expect(r.summary.truncated).toBe(false);
  return r.spans.map((s) => s.name).sort();
}

const KEEP_ALIVE = "setInterval(() => {}, 1000); console.log('ready');";

for (const backend of ['native', 'js'] as const) {
  describe.runIf(backend === 'js' || native || process.env.CI === 'true')(`writeOnExit (${backend})`, () => {
    for (const ext of ['pftrace', 'json']) {
      it(`normal exit (.${ext})`, async () => {
        const out = path.join(tmp, `${backend}-normal.${ext}`);
        const r = await child(backend, out, '');
        expect(r.code).toBe(0);
        expect(spansIn(out)).toEqual(['a', 'b', 'c']);
      });
    }

    it('process.exit(3) keeps its code; the span around it is in the file, flagged abandoned', async () => {
      const out = path.join(tmp, `${backend}-exit.pftrace`);
      const r = await child(backend, out, "t.trace('d', () => process.exit(3));");
      expect(r.code).toBe(3);
      expect(spansIn(out)).toEqual(['a', 'b', 'c', 'd']);
      const flagged = readSpans(out).spans.filter((s) => s.args.abandoned === true).map((s) => s.name);
      expect(flagged).toEqual(['d']);
    });

    for (const ext of ['pftrace', 'json']) {
      it(`spans open at a normal exit end at it, flagged abandoned (.${ext})`, async () => {
        const out = path.join(tmp, `${backend}-open.${ext}`);
        const r = await child(
          backend,
          out,
          "t.begin(t.name('outer')); t.begin(t.name('inner')); t.traceAsync('pending', new Promise(() => {})); " +
            "console.log('last ' + t.now());",
        );
        expect(r.code).toBe(0);
        expect(spansIn(out)).toEqual(['a', 'b', 'c', 'inner', 'outer', 'pending']);
        const spans = readSpans(out).spans;
        const flagged = spans.filter((s) => s.args.abandoned === true).map((s) => s.name).sort();
        expect(flagged).toEqual(['inner', 'outer', 'pending']);
        // They end at the exit, after the program's last statement (ns; a JSON file's
        // times are rounded to the us, so the bound is taken a us lower).
        const lastNs = Math.floor(Number(/last ([\d.]+)/.exec(r.stdout)?.[1]) * 1e3) * 1e3 - 1e3;
        for (const s of spans.filter((x) => x.args.abandoned === true)) expect(s.end, s.name).toBeGreaterThanOrEqual(lastNs);
      });
    }

    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      it(`${sig}: written, then the process dies of the signal`, async () => {
        const out = path.join(tmp, `${backend}-${sig}.pftrace`);
        const r = await child(backend, out, KEEP_ALIVE, sig);
        expect(r.signal).toBe(sig);
        expect(r.code).toBe(null);
        expect(spansIn(out)).toEqual(['a', 'b', 'c']);
      });
    }

    it("the program's own SIGINT handler decides; its exit writes the file", async () => {
      const out = path.join(tmp, `${backend}-handled.pftrace`);
      const r = await child(
        backend,
        out,
        `process.on('SIGINT', () => { console.log('handled'); t.trace('e', () => 0); process.exit(7); }); ${KEEP_ALIVE}`,
        'SIGINT',
      );
      expect(r.stdout).toContain('handled');
      expect(r.code).toBe(7);
      expect(spansIn(out)).toEqual(['a', 'b', 'c', 'e']);
    });

    it('an uncaught exception is reported and exits 1, with the file written', async () => {
      const out = path.join(tmp, `${backend}-throw.pftrace`);
      const r = await child(backend, out, "throw new Error('the program failed');");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('the program failed');
      expect(spansIn(out)).toEqual(['a', 'b', 'c']);
    });
  });
}

describe('writeOnExit option checks', () => {
  it('refuses a path whose extension picks no format, and a non-string', () => {
    expect(() => new Tracer({ backend: 'js', writeOnExit: path.join(tmp, 'x.txt') })).toThrow(RangeError);
    expect(() => new Tracer({ backend: 'js', writeOnExit: 5 as unknown as string })).toThrow(TypeError);
  });
});
