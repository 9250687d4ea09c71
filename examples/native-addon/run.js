'use strict';
// node run.js [trace file]: records the example addon's native threads into a
// hotspan trace (Chrome JSON; open it in Perfetto or chrome://tracing).
// In your own project: require('hotspan').
const { Tracer } = require('../..');
const example = require('./build/Release/example.node');

async function main() {
  const file = process.argv[2] || 'trace.json';
  const tracer = new Tracer();
  example.attach(tracer.nativeApi());
  tracer.begin('main');
  example.parallel(64, 4, 4096); // 4 threads "worker#0..3", 16 chunks each
  example.handoff(100); // 100 async "job" spans, begun and ended on two threads
  tracer.end();
  await tracer.write(file);
  tracer.close();
  console.log(`wrote ${file}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
