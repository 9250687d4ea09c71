// Writers in a fresh process: node bench/cases/writers.mjs <options JSON>
// Per backend (native, then js), records `spans` spans (request > 3
// children, so depth and parents are real), flushes, then times every
// writer that exists: tracer.write(path) by extension (.json: Chrome JSON,
// .pftrace: Perfetto; the js backend's run the core's writers built to
// WebAssembly) and the addon's in-memory Chrome JSON text. Prints one JSON
// line; the js backend's writers are named "js-backend <writer>".
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCase } from '../lib/case-main.mjs';
import { makeTracer, nativeTracer, recordRequests } from '../lib/hotspan.mjs';
import { median } from '../lib/stats.mjs';

const opts = { spans: 1e6, reps: 3, ...JSON.parse(process.argv[2] ?? '{}') };


/** Times tracer.write() per format into out.writers[prefix + name]. */
async function timeWrites(t, spans, dir, prefix, out) {
  const writers = [
    ['chrome-json', 'trace.json'],
    ['perfetto', 'trace.pftrace'],
  ];
  for (const [name, file] of writers) {
    const p = path.join(dir, file);
    const times = [];
    let bytes = 0;
    try {
      for (let r = 0; r <= opts.reps; r++) {
        const t0 = process.hrtime.bigint();
        await t.write(p);
        const dt = Number(process.hrtime.bigint() - t0);
        bytes = statSync(p).size;
        rmSync(p);
        if (r > 0) times.push(dt); // r == 0 is the warm-up
      }
      const ns = median(times);
      out.writers[prefix + name] = { spansPerSec: (spans * 1e9) / ns, bytesPerSpan: bytes / spans, bytes, ms: ns / 1e6, reps: times.length };
    } catch (e) {
      out.writers[prefix + name] = { error: String(e && e.message ? e.message : e).split(dir).join('<tmp>').slice(0, 200) };
    }
  }
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hotspan-bench-'));
  const out = { spans: 0, writers: {} };
  try {
    const t = makeTracer('native');
    try {
      out.spans = recordRequests(t, opts.spans);
      await timeWrites(t, out.spans, dir, '', out);
      // The same document as the addon's Buffer (the facade's test hook
      // reaches the NativeTracer): the formatting alone, without the file
      // system of write().
      const nt = nativeTracer(t);
      if (nt && typeof nt.chromeJson === 'function') {
        const times = [];
        let len = 0;
        for (let r = 0; r <= opts.reps; r++) {
          const t0 = process.hrtime.bigint();
          const s = nt.chromeJson();
          const dt = Number(process.hrtime.bigint() - t0);
          len = s.length;
          if (r > 0) times.push(dt);
        }
        const ns = median(times);
        out.writers['chrome-json-buffer'] = { spansPerSec: (out.spans * 1e9) / ns, bytesPerSpan: len / out.spans, ms: ns / 1e6, reps: times.length };
      }
    } finally {
      t.close();
    }
    const js = makeTracer('js');
    try {
      await timeWrites(js, recordRequests(js, opts.spans), dir, 'js-backend ', out);
    } finally {
      js.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

runCase(main);
