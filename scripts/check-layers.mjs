#!/usr/bin/env node
// The folder layers of lib/ and native/core (ARCHITECTURE.md, "A map of the
// folders"): prints the files per folder, every import (lib/) or #include
// (native/core) that goes from a lower folder to a higher one, and every
// import circle between files. Exits 1 on a circle, on a file in a folder the
// layer lists do not name, or on an upward edge that is not in KNOWN_UP (the
// ones ARCHITECTURE.md lists as still to remove). test/layers.test.ts runs it.
//
//   node scripts/check-layers.mjs
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const LIB_LAYERS = ['common', 'binding', 'attrs', 'read', 'otlp', 'backends', 'tracer', 'auto', 'otel', 'cli', '.'];
const CORE_LAYERS = ['record', 'read', 'write', 'export', '.'];
// Upward edges left to remove (by moving a type or a helper down), as listed
// in ARCHITECTURE.md. A new one fails the check; one removed must go from here.
const KNOWN_UP = new Set([
  'lib/auto/auto-export.ts -> lib/otel/otel-data.ts',
  'lib/common/counts.ts -> lib/otlp/otlp-counters.ts',
  'lib/read/bounded-read.ts -> lib/tracer/options.ts',
]);
let failures = 0;

function walk(dir, pred, out = []) {
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) walk(p, pred, out);
    else if (pred(p)) out.push(path.relative(root, p).split(path.sep).join('/'));
  }
  return out;
}
function folder(f, top) {
  const rest = f.slice(top.length + 1);
  return rest.includes('/') ? rest.split('/')[0] : '.';
}

// lib: relative imports (type-only too: they tie the layers as much).
const libFiles = walk(path.join(root, 'lib'), (p) => p.endsWith('.ts'));
const libEdges = [];
for (const f of libFiles) {
  const s = readFileSync(f, 'utf8');
  for (const m of s.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]*)['"]/g)) {
    const base = path.posix.join(path.posix.dirname(f), m[1]);
    const to = [`${base}.ts`, `${base}/index.ts`, base].find((c) => existsSync(c) && statSync(c).isFile());
    if (to) libEdges.push([f, to, /import\s+type\b/.test(s.slice(s.lastIndexOf('\n', m.index) + 1, m.index + m[0].length))]);
  }
}
// native/core: #include "x" resolved against the includer's folder, then native/core.
const coreFiles = walk(path.join(root, 'native/core'), (p) => /\.(h|cc)$/.test(p));
const coreEdges = [];
for (const f of coreFiles) {
  for (const m of readFileSync(f, 'utf8').matchAll(/^\s*#\s*include\s+"([^"]+)"/gm)) {
    const to = [path.posix.join(path.posix.dirname(f), m[1]), `native/core/${m[1]}`].find((c) => existsSync(c));
    if (to) coreEdges.push([f, to, false]);
  }
}

function report(name, top, layers, files, edges) {
  const rank = (f) => layers.indexOf(folder(f, top));
  const counts = {};
  for (const f of files) counts[folder(f, top)] = (counts[folder(f, top)] ?? 0) + 1;
  console.log(`\n## ${name}: files per folder`);
  for (const l of layers) if (counts[l]) console.log(`  ${l === '.' ? '(top)' : l + '/'}: ${counts[l]}`);
  for (const k of Object.keys(counts)) {
    if (layers.includes(k)) continue;
    console.log(`  ${k}/ (not in the layer list): ${counts[k]}`);
    failures++;
  }
  const up = edges.filter(([a, b]) => folder(a, top) !== folder(b, top) && rank(a) < rank(b) && rank(a) >= 0);
  console.log(`## ${name}: upward edges (lower folder -> higher): ${up.length}`);
  for (const [a, b, t] of up) {
    const known = KNOWN_UP.has(`${a} -> ${b}`);
    if (!known) failures++;
    console.log(`  ${a} -> ${b}${t ? ' (type only)' : ''}${known ? '' : ' NEW: not in KNOWN_UP'}`);
  }
  const seen = new Set(up.map(([a, b]) => `${a} -> ${b}`));
  for (const k of KNOWN_UP) {
    if (k.startsWith(`${top}/`) && !seen.has(k)) {
      console.log(`  gone, remove it from KNOWN_UP: ${k}`);
      failures++;
    }
  }
  // File circles: Tarjan's strongly connected components.
  const adj = new Map(files.map((f) => [f, []]));
  for (const [a, b] of edges) if (a !== b && adj.has(a) && adj.has(b)) adj.get(a).push(b);
  let index = 0;
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), sccs = [];
  const strong = (v) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v);
    for (const w of adj.get(v)) {
      if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const c = [];
      let w;
      do { w = stack.pop(); on.delete(w); c.push(w); } while (w !== v);
      if (c.length > 1) sccs.push(c);
    }
  };
  for (const f of files) if (!idx.has(f)) strong(f);
  console.log(`## ${name}: import circles: ${sccs.length}`);
  for (const c of sccs) console.log(`  ${c.join(' <-> ')}`);
  failures += sccs.length;
}
report('lib', 'lib', LIB_LAYERS, libFiles, libEdges);
report('native/core (includes)', 'native/core', CORE_LAYERS, coreFiles, coreEdges);
console.log(failures === 0 ? '\nlayers: ok' : `\nlayers: ${failures} problem(s)`);
process.exit(failures ? 1 : 0);
