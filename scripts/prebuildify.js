'use strict';
// `npm run prebuildify` (and `npm pack`'s prepack): builds the Node-API 9
// binary with prebuildify into prebuilds/<platform>-<arch>/hotspan.<libc>.node,
// which node-gyp-build loads on any Node >= 20.3 without compiling.
//
//   node scripts/prebuildify.js               this machine's arch (linux-x64 here)
//   node scripts/prebuildify.js --arch arm64  linux-arm64, cross-compiled with
//                                             Debian's aarch64-linux-gnu-g++
//                                             (apt-get install g++-aarch64-linux-gnu)
//   node scripts/prebuildify.js --pack        what `npm pack` ships: this arch, then
//                                             linux-arm64 from linux-x64 (kept if newer
//                                             than its sources). Without the cross
//                                             compiler the arm64 binary is left out
//                                             with a line saying so (any stale one
//                                             removed); under CI=true or
//                                             HOTSPAN_REQUIRE_TOOLS=1 that fails.
//
// A cross build is the same build with the target's CC, CXX and strip and
// node-gyp's --arch (scripts/cross-toolchain.js). The Node-API headers are the
// same for every arch: node-gyp takes them from npm's nodedir setting, else
// from the headers installed next to this node (/usr/bin/node with
// /usr/include/node), else from its download cache, so the build needs no
// network where Node's headers are installed.
//
// It builds in a staging copy of the addon's sources, not in the checkout:
// prebuildify runs `node-gyp rebuild`, which would wipe build/ while tests or a
// running process load build/Release/hotspan.node.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { toolchain, nodedirEnv, prebuildIsFresh } = require('./cross-toolchain');

const root = path.resolve(__dirname, '..');
// What binding.gyp compiles, and package.json (prebuildify names the binary after the package).
const sources = ['package.json', 'binding.gyp', 'native/core', 'native/addon', 'native/include'];

/** Builds prebuilds/linux-<arch>/; throws why it could not. */
function build(arch) {
  const tc = toolchain(arch);
  if (tc.missing) throw new Error(tc.missing);
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), `hotspan-prebuild-${arch}-`));
  try {
    for (const rel of sources) fs.cpSync(path.join(root, rel), path.join(stage, rel), { recursive: true });
    // binding.gyp resolves node-addon-api from the build directory.
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(stage, 'node_modules'), 'dir');
    const prebuildify = require.resolve('prebuildify/bin.js', { paths: [root] });
    // --napi: one binary for every Node with Node-API 9 (binding.gyp sets NAPI_VERSION=9);
    // -t 20.3.0: the first Node 20 with Node-API 9; --tag-libc: glibc and musl binaries differ.
    const args = [prebuildify, '--napi', '--strip', '--tag-libc', '-t', '20.3.0', ...(arch === process.arch ? [] : ['--arch', arch, '--strip-bin', tc.strip]), '--cwd', stage, '--out', root];
    // The compiler's and node-gyp's output (a few hundred lines) is shown only
    // when the build fails, so `npm pack` prints what it packs and little else.
    const r = spawnSync(process.execPath, args, {
      cwd: stage,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 64 * 2 ** 20,
      env: { ...process.env, ...nodedirEnv(), ...tc.env, JOBS: process.env.JOBS || '2' },
    });
    if (r.status !== 0) {
      process.stdout.write(r.stdout ?? '');
      process.stderr.write(r.stderr ?? '');
      throw new Error(`prebuildify for ${arch} failed (${r.error ? String(r.error) : `exit code ${r.status}`})`);
    }
    const dir = path.join(root, 'prebuilds', `${process.platform}-${arch}`);
    for (const f of fs.readdirSync(dir)) console.error(`prebuilt: ${path.relative(root, path.join(dir, f))}`);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

const argv = process.argv.slice(2);
const archAt = argv.indexOf('--arch');
const pack = argv.includes('--pack');
const required = process.env.CI === 'true' || process.env.HOTSPAN_REQUIRE_TOOLS === '1';
try {
  if (archAt >= 0) {
    build(argv[archAt + 1] ?? '');
  } else {
    build(process.arch);
    if (pack && process.platform === 'linux' && process.arch === 'x64') {
      const tc = toolchain('arm64');
      if (prebuildIsFresh(root, 'arm64')) {
        // Built from these sources already (by an earlier pack or the arm64 test stage, which tests it).
        console.error('prebuilt: prebuilds/linux-arm64/hotspan.glibc.node (newer than its sources: kept)');
      } else if (!tc.missing || required) {
        build('arm64');
      } else {
        // A binary from older sources must not ship: the tarball has none for arm64 instead.
        fs.rmSync(path.join(root, 'prebuilds', 'linux-arm64'), { recursive: true, force: true });
        console.error(`prebuildify: linux-arm64 left out of the package: ${tc.missing}`);
      }
    }
  }
} catch (err) {
  console.error(`prebuildify: ${err.message}`);
  process.exitCode = 1;
}
