// Validates a Chrome Trace Event JSON file written by the core against an
// expectations file written by json_test.cc, event by event, with a real
// consumer's parser (strict UTF-8 decode + JSON.parse).
//
//   node check-chrome-json.cjs <trace.json> <expectations.tsv>
//
// Expectations, one per line, tab-separated; byte strings are hex so this file
// does not depend on the writer's escaping:
//   T <tid> <name hex>                                          a timeline
//   X <span id> <name hex> <cat> <tid> <ts ns> <dur ns> <parent id> <flags> <attrs hex|->
//   A <span id> <name hex> <tid> <start ns> <end ns> <parent id> <flags> <attrs hex|->
// ts values are ns relative to the origin; flags: '-' or letters e (error), a (abandoned).
'use strict';
const fs = require('fs');
const { isDeepStrictEqual } = require('util');

const [tracePath, expPath] = process.argv.slice(2);
const errors = [];
const fail = (msg) => {
  if (errors.length < 50) errors.push(msg);
  else if (errors.length === 50) errors.push('... more errors omitted');
};
// Decoding as the WHATWG decoder does (U+FFFD per maximal invalid subpart),
// which is what the writer promises for bytes that are not UTF-8.
const lenient = new TextDecoder('utf-8');
const fromHex = (h) => lenient.decode(Buffer.from(h, 'hex'));

const raw = fs.readFileSync(tracePath);
let doc;
try {
  const text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  doc = JSON.parse(text);
} catch (e) {
  console.error(`trace is not valid UTF-8 JSON: ${e.message}`);
  process.exit(1);
}

if (typeof doc !== 'object' || doc === null || !Array.isArray(doc.traceEvents)) fail('no traceEvents array');
if (doc.displayTimeUnit !== 'ms') fail(`displayTimeUnit ${doc.displayTimeUnit}`);
const topKeys = Object.keys(doc).sort().join(',');
if (topKeys !== 'displayTimeUnit,metadata,traceEvents') fail(`top-level keys ${topKeys}`);
const clockMeta = doc.metadata?.hotspan_clock;
if (clockMeta?.ts_axis !== 'performance.now() in us' || !/^-?\d+$/.test(clockMeta.origin_monotonic_ns) ||
    !/^-?\d+$/.test(clockMeta.origin_unix_ns)) fail(`metadata ${JSON.stringify(doc.metadata)}`);

// Every ts and dur is on the 1/1024 us grid: an integer, or a fraction of
// at most 10 decimals (k / 1024), no exponent; parsed, x * 1024 is an integer.
const textForm = raw.toString('utf8');
for (const m of textForm.matchAll(/"(ts|dur)":([^,}]*)/g)) {
  const ok = (m[1] === 'ts' ? /^-?\d+(\.\d{1,10})?$/ : /^\d+(\.\d{1,10})?$/).test(m[2]);
  if (!ok || !Number.isInteger(Number(m[2]) * 1024)) fail(`${m[1]} not on the grid: ${m[2]}`);
}

const events = doc.traceEvents || [];
const byKind = { M: [], X: [], b: [], e: [] };
for (const ev of events) {
  if (ev.pid !== 1) fail(`pid ${ev.pid} in ${JSON.stringify(ev)}`);
  if (!Number.isInteger(ev.tid)) fail(`tid ${ev.tid}`);
  if (typeof ev.name !== 'string') fail(`name ${ev.name}`);
  if (!(ev.ph in byKind)) fail(`unexpected ph ${ev.ph}`);
  else byKind[ev.ph].push(ev);
}

const expTimelines = [];
const expX = [];
const expA = [];
for (const line of fs.readFileSync(expPath, 'utf8').split('\n')) {
  if (!line) continue;
  const f = line.split('\t');
  if (f[0] === 'T') expTimelines.push({ tid: Number(f[1]), name: fromHex(f[2]) });
  else if (f[0] === 'X')
    expX.push({ id: f[1], name: fromHex(f[2]), cat: f[3], tid: Number(f[4]), ts: Number(f[5]),
      dur: Number(f[6]), parent: Number(f[7]), flags: f[8], attrs: f[9] });
  else if (f[0] === 'A')
    expA.push({ id: f[1], name: fromHex(f[2]), tid: Number(f[3]), start: Number(f[4]), end: Number(f[5]),
      parent: Number(f[6]), flags: f[7], attrs: f[8] });
  else fail(`bad expectation line ${line}`);
}

// Metadata.
const meta = (name) => byKind.M.filter((ev) => ev.name === name);
const proc = meta('process_name');
if (proc.length !== 1 || proc[0].args?.name !== 'hotspan') fail(`process_name ${JSON.stringify(proc)}`);
const threadNames = meta('thread_name');
const sortIdx = meta('thread_sort_index');
if (threadNames.length !== expTimelines.length) fail(`thread_name count ${threadNames.length} != ${expTimelines.length}`);
if (sortIdx.length !== expTimelines.length) fail(`thread_sort_index count ${sortIdx.length}`);
if (byKind.M.length !== 1 + 2 * expTimelines.length) fail(`M count ${byKind.M.length}`);
for (const t of expTimelines) {
  const n = threadNames.filter((ev) => ev.tid === t.tid);
  if (n.length !== 1 || n[0].args?.name !== t.name)
    fail(`thread_name tid ${t.tid}: ${JSON.stringify(n)} expected ${JSON.stringify(t.name)}`);
  const s = sortIdx.filter((ev) => ev.tid === t.tid);
  if (s.length !== 1 || s[0].args?.sort_index !== t.tid) fail(`thread_sort_index tid ${t.tid}: ${JSON.stringify(s)}`);
}

// ns back from a grid time, as the README says (exact for |ns| < 2^47, ~39 h).
const nsOf = (us) => Math.round(us * 1000);

function checkArgs(where, args, exp) {
  if (typeof args !== 'object' || args === null) return fail(`${where}: no args`);
  if (args.span_id !== Number(exp.id)) fail(`${where}: span_id ${args.span_id}`);
  if (args.parent_id !== exp.parent) fail(`${where}: parent_id ${args.parent_id} != ${exp.parent}`);
  const want = new Set(['span_id', 'parent_id']);
  const err = exp.flags.includes('e');
  const ab = exp.flags.includes('a');
  if (err ? args.error !== true : 'error' in args) fail(`${where}: error ${args.error}`);
  if (ab ? args.abandoned !== true : 'abandoned' in args) fail(`${where}: abandoned ${args.abandoned}`);
  if (err) want.add('error');
  if (ab) want.add('abandoned');
  if (exp.attrs !== '-') {
    const attrs = JSON.parse(Buffer.from(exp.attrs, 'hex').toString('utf8'));
    for (const [k, v] of Object.entries(attrs)) {
      want.add(k);
      if (!isDeepStrictEqual(args[k], v)) fail(`${where}: attr ${k} ${JSON.stringify(args[k])} != ${JSON.stringify(v)}`);
    }
  }
  const got = Object.keys(args).sort().join(',');
  const exp2 = [...want].sort().join(',');
  if (got !== exp2) fail(`${where}: args keys ${got} != ${exp2}`);
}

// Complete events, matched by span id.
const xById = new Map();
for (const ev of byKind.X) {
  const id = String(ev.args?.span_id);
  if (xById.has(id)) fail(`duplicate X span_id ${id}`);
  xById.set(id, ev);
}
if (byKind.X.length !== expX.length) fail(`X count ${byKind.X.length} != ${expX.length}`);
for (const x of expX) {
  const ev = xById.get(x.id);
  const where = `X ${x.id}`;
  if (!ev) {
    fail(`${where}: missing`);
    continue;
  }
  if (ev.name !== x.name) fail(`${where}: name ${JSON.stringify(ev.name)} != ${JSON.stringify(x.name)}`);
  if (ev.cat !== x.cat) fail(`${where}: cat ${ev.cat} != ${x.cat}`);
  if (ev.tid !== x.tid) fail(`${where}: tid ${ev.tid}`);
  if (nsOf(ev.ts) !== x.ts) fail(`${where}: ts ${ev.ts} != ${x.ts} ns`);
  // A reader's end, ts + dur in doubles (exact on the grid), is the end to the ns.
  if (nsOf(ev.ts + ev.dur) !== x.ts + x.dur) fail(`${where}: ts ${ev.ts} + dur ${ev.dur} != end ${x.ts + x.dur} ns`);
  checkArgs(where, ev.args, x);
}

// Async begin/end pairs, matched by the id string.
const bById = new Map();
const eById = new Map();
for (const ev of byKind.b) {
  if (bById.has(ev.id)) fail(`duplicate b id ${ev.id}`);
  bById.set(ev.id, ev);
}
for (const ev of byKind.e) {
  if (eById.has(ev.id)) fail(`duplicate e id ${ev.id}`);
  eById.set(ev.id, ev);
}
if (byKind.b.length !== expA.length || byKind.e.length !== expA.length)
  fail(`b/e counts ${byKind.b.length}/${byKind.e.length} != ${expA.length}`);
for (const a of expA) {
  const where = `async ${a.id}`;
  const b = bById.get(a.id);
  const e = eById.get(a.id);
  if (!b || !e) {
    fail(`${where}: missing b or e`);
    continue;
  }
  for (const ev of [b, e]) {
    if (ev.name !== a.name) fail(`${where}: name ${JSON.stringify(ev.name)} != ${JSON.stringify(a.name)}`);
    if (ev.cat !== 'async') fail(`${where}: cat ${ev.cat}`);
    if (ev.tid !== a.tid) fail(`${where}: tid ${ev.tid}`);
  }
  if (nsOf(b.ts) !== a.start) fail(`${where}: b ts ${b.ts} != ${a.start} ns`);
  if (nsOf(e.ts) !== a.end) fail(`${where}: e ts ${e.ts} != ${a.end} ns`);
  checkArgs(where, b.args, a);
}

if (errors.length) {
  console.error(errors.join('\n'));
  process.exit(1);
}
console.log(`chrome json ok: ${events.length} events (${expX.length} X, ${expA.length} async pairs, ${expTimelines.length} timelines)`);
