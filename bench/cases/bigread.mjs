// Reading a big trace without taking the process down (issue 12):
//   node --expose-gc bench/cases/bigread.mjs <options JSON>
// Records `spans` begin(id)/end() pairs from JS (native backend) in `steps`
// groups, alternating two names, then times each read: stats(), query()
// steps (over every span and over one group), the bounded snapshot forms,
// the columnar form, and the plain snapshot()'s answer (the records or its
// refusal). Also measures the V8 heap a materialized record takes, which
// lib/read/bounded-read.ts's estimate rounds up. Prints one JSON line.
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';

const opts = { spans: 1e8, steps: 1000, batch: 65536, backend: 'native', ...JSON.parse(process.argv[2] ?? '{}') };
const gc = globalThis.gc ?? (() => {});

/** ms that fn takes, and its value. */
function timed(fn) {
  const t0 = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, value };
}

function main() {
  // Keep every span: the default memory budget (256 MiB, overwrite) holds about 9.5M.
  const t = makeTracer(opts.backend, { memoryLimit: 2 ** 36, onFull: 'drop' });
  const fwd = t.name('fwd');
  const bwd = t.name('bwd');
  const n = Math.floor(opts.spans);
  const per = Math.ceil(n / opts.steps);
  const rec = timed(() => {
    let done = 0;
    for (let s = 0; done < n; s++) {
      t.groupBegin('step');
      const stop = Math.min(n, done + per);
      for (; done < stop; done++) {
        t.begin(done & 1 ? bwd : fwd);
        t.end();
      }
      t.groupEnd();
    }
  });
  t.flush();
  gc();
  const heap0 = process.memoryUsage();

  const out = { backend: opts.backend, spans: n, steps: opts.steps, recordMs: rec.ms, rssAfterRecord: heap0.rss };
  const stats = timed(() => t.stats());
  out.statsMs = stats.ms;
  out.committed = stats.value.reduce((a, r) => a + (r.name === 'step' ? 0 : r.count), 0);

  const q = timed(() => t.query());
  out.queryOpenMs = q.ms;
  const query = q.value;
  const steps = timed(() => query.group('step'));
  out.queryGroupsMs = steps.ms;
  out.groupCount = steps.value.count;
  const last = steps.value.last();
  const ops = {
    'spans("fwd").mean() (every span)': () => query.spans('fwd').mean(),
    'spans().nth(-1) (every span)': () => query.spans().nth(-1).id,
    'spans().count (every span)': () => query.spans().count,
    'group("step").last().spans("fwd").total()': () => last.spans('fwd').total(),
    'group("step").last().gaps("bwd").length': () => last.gaps('bwd').length,
    'group("step").last().idle()': () => last.idle(),
    'group("step").nth(500).spans().nth(3)': () => steps.value.nth(Math.min(500, steps.value.count - 1)).spans().nth(3).id,
  };
  out.query = {};
  for (const [label, fn] of Object.entries(ops)) {
    const r = timed(fn);
    out.query[label] = { ms: r.ms, value: r.value };
  }

  const tail = timed(() => t.snapshot({ offset: Math.max(0, n - opts.batch), limit: opts.batch }));
  out.boundedSnapshotMs = tail.ms;
  out.boundedSnapshotRecords = tail.value.length;
  const it = t.snapshotBatches({ batch: opts.batch });
  const first = timed(() => it.next().value);
  out.firstBatchMs = first.ms;
  out.firstBatchRecords = first.value.length;
  const cols = timed(() => t.snapshotColumns({ offset: 0, limit: Math.min(n, 1e7) }));
  out.columnsMs = cols.ms;
  out.columnsRecords = cols.value.count;

  // V8 heap per materialized record, over 1M of them.
  const sample = Math.min(n, 1e6);
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = t.snapshot({ limit: sample });
  gc();
  out.heapBytesPerRecord = (process.memoryUsage().heapUsed - before) / kept.length;

  const plain = timed(() => {
    try {
      return { records: t.snapshot().length };
    } catch (e) {
      return { refused: String(e.message).slice(0, 160) };
    }
  });
  out.plainSnapshotMs = plain.ms;
  out.plainSnapshot = plain.value;
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

runCase(main);
