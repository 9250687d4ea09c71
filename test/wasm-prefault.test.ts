// The wasm recorder's prefault worker (lib/binding/wasm-prefault.ts): the
// recording thread's own first-touch page faults move to a worker. Counted,
// not timed: the recording thread's minor faults (/proc/thread-self/stat,
// field 10, minflt) over records written into memory the worker was asked to
// touch first, against the same records with the worker off (the control,
// one fault per 4 KiB page). Linux only (/proc).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

import { WasmRecorder } from '../lib/binding/wasm-recorder';
import type { PrefaultOptions } from '../lib/binding/wasm-prefault';

const MIB = 1 << 20;
const PAGE = 4096;
/** Records written in the measured stretch: 2 MiB of them, 512 pages (the core's record is 28 bytes). */
const MEASURED_BYTES = 2 * MIB;
const RECORD_BYTES = 28;

/** This thread's own minor page faults so far. */
function minorFaults(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]); // field 10: 3 is the first after ')'
}

/** The recording thread's minor faults over MEASURED_BYTES of records in never-touched memory. */
function measuredFaults(prefault: PrefaultOptions | false): { faults: number; pages: number; prefaulting: boolean } {
  const rec = new WasmRecorder({ memoryLimit: 2 ** 40, onFull: 'overwrite', originNs: 0n, prefault });
  try {
    const t = rec.thread('main');
    const name = rec.intern('tick');
    let i = 0;
    let failed = 0; // statuses other than ok (counted, not expect()ed: nothing allocates in the loop)
    const span = (): void => {
      failed += rec.begin(t, name, i * 1e-3) === 0 ? 0 : 1;
      failed += rec.end(t, i * 1e-3 + 5e-4) === 0 ? 0 : 1;
      i++;
    };
    // Until the memory (grown by doubling: native/wasm/sbrk.cc) reaches 16
    // MiB: the heap then ends just above 8 MiB, with some 8 MiB grown and
    // untouched above it, which the measured records stay within.
    while (rec.memoryBytes() < 16 * MIB) span();
    rec.settlePrefault(); // the worker has touched what it was asked to: heap end + aheadBytes
    const spans = MEASURED_BYTES / RECORD_BYTES;
    const before = minorFaults();
    for (let k = 0; k < spans; k++) span();
    const faults = minorFaults() - before;
    expect(failed).toBe(0);
    expect(rec.counts().kept).toBe(i);
    return { faults, pages: MEASURED_BYTES / PAGE, prefaulting: rec.prefaulting() };
  } finally {
    rec.free();
  }
}

describe.runIf(process.platform === 'linux')("the wasm recorder's prefault worker", () => {
  it('takes the first-touch faults of fresh record pages off the recording thread', () => {
    const on = measuredFaults({ startBytes: 0, aheadBytes: 4 * MIB });
    expect(on.prefaulting).toBe(true);
    // The control: without the worker, one fault per page of records.
    const off = measuredFaults(false);
    expect(off.prefaulting).toBe(false);
    const figures = JSON.stringify({ on, off });
    expect(off.faults, figures).toBeGreaterThanOrEqual(0.9 * off.pages);
    // With it, none of those: 3 or 4 are left, for whatever else the thread
    // touches; the bound leaves room for a GC's fresh pages on this thread.
    expect(on.faults, figures).toBeLessThan(0.25 * on.pages);
  });

  it('starts no worker below startBytes, and stops it on close()', () => {
    const rec = new WasmRecorder({ memoryLimit: 2 ** 40, onFull: 'overwrite', originNs: 0n, prefault: { startBytes: 4 * MIB, aheadBytes: MIB } });
    const t = rec.thread('main');
    const name = rec.intern('tick');
    while (rec.memoryBytes() < 2 * MIB) {
      rec.begin(t, name, 0);
      rec.end(t, 0);
    }
    expect(rec.prefaulting()).toBe(false); // the heap ends below 2 MiB
    while (rec.memoryBytes() < 8 * MIB) {
      rec.begin(t, name, 0);
      rec.end(t, 0);
    }
    expect(rec.prefaulting()).toBe(true);
    rec.close();
    expect(rec.prefaulting()).toBe(false);
    expect(rec.snapshot().count).toBeGreaterThan(0); // the records stay readable
    rec.free();
  });

  it('runs by default past 2 MiB of heap, and not under HOTSPAN_CHUNK_RESERVE=0', () => {
    const prefaultingAt8MiB = (): boolean => {
      const rec = new WasmRecorder({ memoryLimit: 2 ** 40, onFull: 'overwrite', originNs: 0n });
      const t = rec.thread('main');
      const name = rec.intern('tick');
      while (rec.memoryBytes() < 8 * MIB) {
        rec.begin(t, name, 0);
        rec.end(t, 0);
      }
      const on = rec.prefaulting();
      rec.free();
      return on;
    };
    const saved = process.env.HOTSPAN_CHUNK_RESERVE;
    try {
      delete process.env.HOTSPAN_CHUNK_RESERVE;
      expect(prefaultingAt8MiB()).toBe(true);
      process.env.HOTSPAN_CHUNK_RESERVE = '0';
      expect(prefaultingAt8MiB()).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.HOTSPAN_CHUNK_RESERVE;
      else process.env.HOTSPAN_CHUNK_RESERVE = saved;
    }
  });

  it('never keeps the process alive: a recorder left open with its worker running exits', () => {
    const code = `const { WasmRecorder } = require('./dist/binding/wasm-recorder.js');
      const rec = new WasmRecorder({ memoryLimit: 2 ** 40, onFull: 'overwrite', originNs: 0n, prefault: { startBytes: 0, aheadBytes: 1 << 20 } });
      const t = rec.thread('main');
      const name = rec.intern('tick');
      while (rec.memoryBytes() < 8 << 20) { rec.begin(t, name, 0); rec.end(t, 0); }
      rec.settlePrefault();
      console.log(rec.prefaulting());`;
    const r = spawnSync(process.execPath, ['-e', code], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('true');
    expect(r.status).toBe(0);
  });
});
