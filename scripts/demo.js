'use strict';
// `npm run demo`: traces a small workload on the main thread, in a
// worker_threads worker that joins the tracer, and on two native threads of
// another addon (test/fixtures/consumer, which knows hotspan only through the
// C ABI in native/include/hotspan.h), then writes trace.json and trace.pftrace (open them in
// https://ui.perfetto.dev or chrome://tracing) and prints the summary table.
const path = require('node:path');
const { createHash } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { Worker } = require('node:worker_threads');
const { Tracer, formatStats } = require('../dist/index.js');

// The consumer addon, built with node-gyp on first use (offline: it needs only
// hotspan.h and the Node headers). Returns undefined, saying why, if it cannot
// be built or loaded: the rest of the demo does not need it.
function loadConsumer() {
  try {
    const { buildConsumer } = require('../test/fixtures/build-consumer.js');
    return require(buildConsumer());
  } catch (e) {
    console.log(`(the native-thread part is skipped: the C ABI consumer addon is unavailable: ${e.message.split('\n')[0]})`);
    return undefined;
  }
}

const dist = path.join(__dirname, '..', 'dist', 'index.js');

// The worker's part: hash some buffers, each in a span, on its own timeline.
const workerSource = `
  const { workerData, parentPort } = require('node:worker_threads');
  const { createHash } = require('node:crypto');
  const { Tracer } = require(workerData.dist);
  const t = Tracer.join(workerData.token, { threadName: 'worker: hasher' });
  const HASH = t.name('worker.hash');
  const buf = Buffer.alloc(256 * 1024, 7);
  for (let i = 0; i < 40; i++) {
    t.begin(HASH);
    createHash('sha256').update(buf).digest();
    t.end();
  }
  t.close();
  parentPort.postMessage('done');
`;

function busyWork(n) {
  const a = Array.from({ length: n }, (_, i) => (i * 2654435761) % 1000003);
  return a.sort((x, y) => x - y)[n >> 1];
}

async function main() {
  const tracer = new Tracer();
  console.log(`hotspan demo: ${tracer.backend} backend (clock bound ${(tracer.clockBoundMs * 1e6).toFixed(0)} ns)`);
  const SORT = tracer.name('sort');
  const disk = tracer.track('disk', { serial: true });

  // The consumer addon first: building it (seconds, on first use) is no work
  // of the demo's, and nothing records before it is ready, so the trace has no
  // hole for it. Only the native-thread part needs the addon (the C ABI).
  let consumer;
  if (tracer.backend === 'native') {
    consumer = loadConsumer();
  } else {
    console.log('(no native addon: the native-thread part needs it and is skipped)');
  }
  const ready = performance.now();
  // Both the native and the js backend let a worker join.
  const worker = new Worker(workerSource, { eval: true, workerData: { dist, token: tracer.share() } });
  const workerDone = worker
    ? new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      })
    : Promise.resolve();

  for (let step = 0; step < 8; step++) {
    await tracer.group(
      'step',
      async () => {
        const data = tracer.trace('data', () => JSON.stringify({ step, items: Array.from({ length: 2000 }, (_, i) => ({ i })) }));
        tracer.trace('parse', () => JSON.parse(data), { bytes: data.length });
        tracer.begin(SORT);
        busyWork(20000 + step * 5000);
        tracer.end();
        // Two writes queued on a serial track: the second starts when the first ends.
        const w1 = tracer.traceAsync('disk.write', () => new Promise((r) => setTimeout(r, 2)), { track: disk });
        const w2 = tracer.traceAsync('disk.write', () => new Promise((r) => setTimeout(r, 1)), { track: disk });
        tracer.trace('hash', () => createHash('sha1').update(data).digest('hex'));
        await Promise.all([w1, w2]);
      },
      { step },
    );
  }

  if (consumer) {
    // Another addon's std::threads record nested spans through tracer.nativeApi();
    // they take the non-holder path (batched, drained on this thread). run() joins them.
    const tallies = consumer.run(tracer.nativeApi(), {
      threads: 2,
      spansPerThread: 5000,
      depth: 3,
      threadNamePrefix: 'encoder',
    });
    const n = tallies.reduce((sum, x) => sum + x.recorded, 0);
    console.log(`native threads ${tallies.map((x) => x.name).join(', ')} recorded ${n} spans through the C ABI`);
  }
  await workerDone;
  await tracer.settle({ timeoutMs: 5000 });

  const file = path.resolve('trace.json');
  await tracer.write(file);
  const pftrace = path.resolve('trace.pftrace');
  await tracer.write(pftrace);
  const q = tracer.query();
  const steps = q.group('step');
  console.log(`\n${tracer.snapshot().length} spans on ${tracer.timelines().length} timelines -> ${file}, ${pftrace}`);
  console.log(
    `steps: ${steps.count}, mean step ${(steps.durations().reduce((a, b) => a + b, 0) / steps.count).toFixed(3)} ms, ` +
      `disk idle in the last step ${q.timeline('disk').group('step').last().idle().toFixed(3)} ms\n`,
  );
  console.log(formatStats(tracer.stats()));
  const { first, gap } = largestGap(tracer.snapshot());
  console.log(`setup done at ${ready.toFixed(3)} ms, first span at ${first.toFixed(3)} ms, largest gap between spans ${gap.toFixed(3)} ms`);
  tracer.close();
  // A warning, not a failure: a loaded machine can stall a worker's start this
  // long. test/demo.test.ts checks what does not depend on load (no span
  // before the setup is done).
  if (gap > MAX_GAP_MS) {
    console.error(`hotspan demo: warning: the trace has a ${gap.toFixed(0)} ms gap with no span (a busy machine, or it traced more than its own work)`);
  }
}

/** The demo's work is back to back: no stretch this long without a span, between its first and its last. */
const MAX_GAP_MS = 1000;

/** The first span's start and the longest stretch between the first start and the last end that no span covers (ms). */
function largestGap(spans) {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  if (sorted.length === 0) return { first: NaN, gap: 0 };
  let gap = 0;
  let reach = sorted[0].end;
  for (const s of sorted) {
    if (s.start > reach) gap = Math.max(gap, s.start - reach);
    reach = Math.max(reach, s.end);
  }
  return { first: sorted[0].start, gap };
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
