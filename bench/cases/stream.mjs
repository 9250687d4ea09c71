// tracer.stream() in a fresh process: node bench/cases/stream.mjs <options JSON>
//
// 1. Writer throughput: `spans` spans (request > 3 children) recorded with
//    no stream, then a stream opened on them and closed: the stream's thread
//    drains every record into the Perfetto file; spans/s = spans / (open to
//    close), the file's bytes per span beside it. `drains` times in one
//    process (each on newly recorded spans, into a new file, deleted after),
//    the figure their median, so one preempted stretch of ~0.2 s does not
//    make the process's figure. Beside each drain: the process's CPU time
//    over it (user, system: the stream's two threads, as the JS thread only
//    waits in close()) and its involuntary context switches, which tell a
//    writer that waited for a CPU from one that was slow.
// 2. The JS thread's cost per span, streaming on vs off, side by side in
//    this one process: two native tracers (the same 64 MiB overwrite budget),
//    one streaming to a file; alternating stretches of begin(id)/end() on
//    each; ns per span per stretch (wall, and the JS thread's own CPU time,
//    which leaves out the waits for a CPU the stream's thread had), the
//    ratio of the medians and the median of the per-pair ratios.
// Prints one JSON line.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCase } from '../lib/case-main.mjs';
import { makeTracer, recordRequests } from '../lib/hotspan.mjs';
import { median } from '../lib/stats.mjs';

const opts = { spans: 4e6, drains: 5, stretches: 12, stretchSpans: 1e6, ...JSON.parse(process.argv[2] ?? '{}') };

function throughput(dir) {
  const drains = [];
  let spans = 0;
  let bytesPerSpan = 0;
  for (let d = 0; d < opts.drains; d++) {
    // A tracer per drain: a closed stream leaves its records kept, and the
    // next would start with them. The whole trace stays in memory until the
    // stream has it: budget above it.
    const t = makeTracer('native', { memoryLimit: Math.max(64 * 2 ** 20, opts.spans * 40) });
    try {
      spans = recordRequests(t, opts.spans);
      const file = path.join(dir, `drain-${d}.pftrace`);
      const cpu0 = process.cpuUsage();
      const csw0 = process.resourceUsage().involuntaryContextSwitches;
      const t0 = process.hrtime.bigint();
      const s = t.stream(file);
      s.close();
      const ns = Number(process.hrtime.bigint() - t0);
      const cpu = process.cpuUsage(cpu0);
      const csw = process.resourceUsage().involuntaryContextSwitches - csw0;
      const st = s.status();
      if (st.written !== spans) throw new Error(`stream wrote ${st.written} of ${spans} spans`);
      bytesPerSpan = statSync(file).size / spans;
      rmSync(file);
      drains.push({ spansPerSec: (spans * 1e9) / ns, ms: ns / 1e6, userMs: cpu.user / 1e3, systemMs: cpu.system / 1e3, involuntarySwitches: csw });
    } finally {
      t.close();
    }
  }
  const ms = median(drains.map((x) => x.ms));
  return {
    spans,
    spansPerSec: (spans * 1e3) / ms,
    bytesPerSpan,
    ms,
    drains,
    userMs: median(drains.map((x) => x.userMs)),
    systemMs: median(drains.map((x) => x.systemMs)),
  };
}

// The JS thread's own CPU time (ns; Linux schedstat of the main thread, whose
// tid is the pid): what the thread spent, without the time it waited for a
// CPU that another thread (the stream's, or another process) had.
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
const cpuNs = () => {
  try {
    return Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
};

/** [wall ns per span, JS-thread CPU ns per span]. */
function stretch(t, id, n) {
  const c0 = cpuNs();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    t.begin(id);
    t.end();
  }
  const wall = Number(process.hrtime.bigint() - t0) / n;
  return [wall, (cpuNs() - c0) / n];
}

function jsCost(dir) {
  const budget = { memoryLimit: 64 * 2 ** 20, onFull: 'overwrite' };
  const off = makeTracer('native', budget);
  const on = makeTracer('native', budget);
  const s = on.stream(path.join(dir, 'cost.pftrace'));
  try {
    const idOff = off.name('span');
    const idOn = on.name('span');
    // Warm-up: both budgets full, both in steady state (the stream's chunks released).
    for (let w = 0; w < 3; w++) {
      stretch(off, idOff, 1e6);
      stretch(on, idOn, 1e6);
    }
    const a = [];
    const b = [];
    const ac = [];
    const bc = [];
    const run = (t, id, wall, cpu) => {
      const [w, c] = stretch(t, id, opts.stretchSpans);
      wall.push(w);
      cpu.push(c);
    };
    for (let k = 0; k < opts.stretches; k++) {
      // Alternating which goes first, so neither always follows the other.
      if (k % 2 === 0) {
        run(on, idOn, a, ac);
        run(off, idOff, b, bc);
      } else {
        run(off, idOff, b, bc);
        run(on, idOn, a, ac);
      }
    }
    s.close();
    const st = s.status();
    const c = on.counts();
    return {
      onNsPerSpan: median(a),
      offNsPerSpan: median(b),
      ratio: median(a) / median(b),
      pairRatio: median(a.map((x, i) => x / b[i])),
      onCpuNsPerSpan: median(ac),
      offCpuNsPerSpan: median(bc),
      cpuRatio: median(ac) / median(bc),
      streamWritten: st.written,
      streamMissed: st.missed,
      produced: c.produced,
      released: c.released,
      overwritten: c.overwritten,
    };
  } finally {
    on.close();
    off.close();
  }
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hotspan-bench-stream-'));
  try {
    const out = { throughput: throughput(dir), jsCost: jsCost(dir) };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runCase(main);
