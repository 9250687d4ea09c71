#!/usr/bin/env node
// The digest of what built native/wasm/hotspan_core.wasm, kept beside it in
// hotspan_core.wasm.digest (JSON): the compiler's version string, the build
// flags, the SHA-256 of every file the build read (each .cc it compiles, every
// project header those include, as the compiler listed them, and the build
// script itself, which holds the source list and the flags) and of the .wasm.
//
//   node scripts/wasm-digest.mjs check
//       Needs no compiler: fails when a file the digest lists changed, is
//       missing, or when the .wasm is not the one the digest describes. A
//       source change without `npm run build:wasm` fails here on any machine.
//   node scripts/wasm-digest.mjs write <out> <compiler> <flags-file> <deps-file> <wasm>
//       Used by scripts/build-wasm.sh after a build: <deps-file> holds the
//       compiler's `-MM` output for every source.
//
// Hashes are over the file's text with CRLF read as LF, so a checkout that
// converts line endings hashes the same as the repository.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const WASM = 'native/wasm/hotspan_core.wasm';
export const DIGEST = `${WASM}.digest`;
export const BUILD_SCRIPT = 'scripts/build-wasm.sh';

function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

/** SHA-256 of a text file with CRLF read as LF. */
export function textHash(file) {
  const text = readFileSync(file).toString('latin1').replace(/\r\n/g, '\n');
  return sha256(Buffer.from(text, 'latin1'));
}

/** The repository-relative files a `-MM` dependency listing names, sorted, without duplicates. */
export function parseDeps(text) {
  const files = new Set();
  for (const rule of text.replace(/\\\r?\n/g, ' ').split(/\r?\n/)) {
    const colon = rule.indexOf(':');
    if (colon < 0) continue;
    for (const f of rule.slice(colon + 1).trim().split(/\s+/)) {
      if (f) files.add(path.posix.normalize(f.replace(/\\/g, '/')));
    }
  }
  return [...files].sort();
}

/** The digest of a build, for `write`: every path is relative to `root`. */
export function makeDigest(root, { compiler, flags, inputs, wasm }) {
  const files = {};
  for (const f of [...new Set([...inputs, BUILD_SCRIPT])].sort()) {
    if (path.isAbsolute(f) || f.startsWith('../')) throw new Error(`wasm-digest: input ${f} is outside the repository`);
    files[f] = textHash(path.join(root, f));
  }
  return { wasm: WASM, sha256: sha256(readFileSync(path.resolve(root, wasm))), compiler, flags, files };
}

/**
 * Checks the committed digest against the files under `root`. Returns the
 * problems found, each a sentence; empty when the .wasm is what its sources build.
 */
export function checkDigest(root) {
  const digestPath = path.join(root, DIGEST);
  if (!existsSync(digestPath)) return [`${DIGEST} is missing`];
  let d;
  try {
    d = JSON.parse(readFileSync(digestPath, 'utf8'));
  } catch (e) {
    return [`${DIGEST} is not JSON: ${e.message}`];
  }
  if (typeof d !== 'object' || d === null || typeof d.files !== 'object' || d.files === null || typeof d.sha256 !== 'string') {
    return [`${DIGEST} lacks its "sha256" or "files"`];
  }
  const problems = [];
  if (!(BUILD_SCRIPT in d.files)) problems.push(`${DIGEST} does not list ${BUILD_SCRIPT}`);
  for (const [f, want] of Object.entries(d.files)) {
    const file = path.join(root, f);
    if (!existsSync(file)) problems.push(`${f} (built into the .wasm) is missing`);
    else if (textHash(file) !== want) problems.push(`${f} changed since ${WASM} was built`);
  }
  const wasm = path.join(root, WASM);
  if (!existsSync(wasm)) problems.push(`${WASM} is missing`);
  else if (sha256(readFileSync(wasm)) !== d.sha256) problems.push(`${WASM} is not the file ${DIGEST} describes`);
  return problems;
}

function main(argv) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const [cmd, ...args] = argv;
  if (cmd === 'check') {
    const problems = checkDigest(root);
    if (problems.length > 0) {
      for (const p of problems) console.error(`wasm-digest: ${p}`);
      console.error(`wasm-digest: run npm run build:wasm (clang-16) and commit ${WASM} and ${DIGEST}`);
      return 1;
    }
    const d = JSON.parse(readFileSync(path.join(root, DIGEST), 'utf8'));
    console.log(`wasm-digest: ${WASM} matches the ${Object.keys(d.files).length} files it was built from (${d.compiler})`);
    return 0;
  }
  if (cmd === 'write' && args.length === 5) {
    const [out, compiler, flagsFile, depsFile, wasm] = args;
    const flags = readFileSync(flagsFile, 'utf8').split('\n').filter((l) => l !== '');
    const digest = makeDigest(root, { compiler, flags, inputs: parseDeps(readFileSync(depsFile, 'utf8')), wasm });
    writeFileSync(out, `${JSON.stringify(digest, null, 2)}\n`);
    return 0;
  }
  console.error('usage: wasm-digest.mjs check | write <out> <compiler> <flags-file> <deps-file> <wasm>');
  return 2;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
