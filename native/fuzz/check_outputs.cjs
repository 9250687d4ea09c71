// The seed corpus's outputs, decoded by real consumers: every Chrome JSON
// document through a fatal UTF-8 TextDecoder and JSON.parse, every Perfetto
// document through `protoc --decode=perfetto.protos.Trace` with the upstream
// schema (vendor/perfetto/perfetto_trace.proto), or `protoc --decode_raw`
// (wire format only) while the schema is not vendored.
//
//   node check_outputs.cjs <out dir> <native/fuzz dir> <replay binary>...
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const [outDir, fuzzDir, ...replays] = process.argv.slice(2);
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
for (const bin of replays) {
  const name = path.basename(bin).replace(/_replay$/, '');
  execFileSync(bin, [path.join(fuzzDir, 'corpus', name)], {
    env: { ...process.env, HOTSPAN_FUZZ_OUT: outDir },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const schema = path.join(fuzzDir, '..', '..', 'vendor', 'perfetto', 'perfetto_trace.proto');
const protocArgs = fs.existsSync(schema)
  ? [`-I${path.dirname(schema)}`, '--decode=perfetto.protos.Trace', path.basename(schema)]
  : ['--decode_raw'];
const decoder = new TextDecoder('utf-8', { fatal: true });
const errors = [];
let json = 0;
let pb = 0;
for (const file of fs.readdirSync(outDir).sort()) {
  const full = path.join(outDir, file);
  const bytes = fs.readFileSync(full);
  try {
    if (file.endsWith('.json')) {
      const doc = JSON.parse(decoder.decode(bytes));
      if (!Array.isArray(doc.traceEvents)) throw new Error('no traceEvents array');
      json++;
    } else if (file.endsWith('.pftrace')) {
      execFileSync('protoc', protocArgs, { input: bytes, stdio: ['pipe', 'ignore', 'pipe'], maxBuffer: 1 << 28 });
      pb++;
    }
  } catch (err) {
    errors.push(`${file}: ${String(err.stderr || err.message).trim().split('\n')[0]}`);
  }
}
console.log(`fuzz corpus outputs: ${json} JSON documents parsed, ${pb} Perfetto documents decoded ` +
  `(protoc ${protocArgs.join(' ')})`);
if (json === 0 || pb === 0) errors.push('no outputs were written');
if (errors.length > 0) {
  console.error(errors.join('\n'));
  process.exit(1);
}
