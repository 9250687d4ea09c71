'use strict';
// `npm run prebuildify` (and `npm pack`'s prepack): builds the Node-API 9
// binary with prebuildify into prebuilds/<platform>-<arch>/hotspan.<libc>.node,
// which node-gyp-build loads on any Node >= 20.3 without compiling.
//
// It builds in a staging copy of the addon's sources, not in the checkout:
// prebuildify runs `node-gyp rebuild`, which would wipe build/ while tests or a
// running process load build/Release/hotspan.node.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
// What binding.gyp compiles, and package.json (prebuildify names the binary after the package).
const sources = ['package.json', 'binding.gyp', 'native/core', 'native/addon', 'native/include'];

const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'hotspan-prebuild-'));
try {
  for (const rel of sources) fs.cpSync(path.join(root, rel), path.join(stage, rel), { recursive: true });
  // binding.gyp resolves node-addon-api from the build directory.
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(stage, 'node_modules'), 'dir');
  const prebuildify = require.resolve('prebuildify/bin.js', { paths: [root] });
  // --napi: one binary for every Node with Node-API 9 (binding.gyp sets NAPI_VERSION=9);
  // -t 20.3.0: the first Node 20 with Node-API 9; --tag-libc: glibc and musl binaries differ.
  const args = [prebuildify, '--napi', '--strip', '--tag-libc', '-t', '20.3.0', '--cwd', stage, '--out', root];
  // The compiler's and node-gyp's output (a few hundred lines) is shown only
  // when the build fails, so `npm pack` prints what it packs and little else.
  const r = spawnSync(process.execPath, args, {
    cwd: stage,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
    env: { ...process.env, JOBS: process.env.JOBS || '2' },
  });
  if (r.status !== 0) {
    process.stdout.write(r.stdout ?? '');
    process.stderr.write(r.stderr ?? '');
    console.error(`prebuildify failed (${r.error ? String(r.error) : `exit code ${r.status}`})`);
    process.exitCode = 1;
  } else {
    const dir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
    for (const f of fs.readdirSync(dir)) console.error(`prebuilt: ${path.relative(root, path.join(dir, f))}`);
  }
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}
