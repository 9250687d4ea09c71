'use strict';
// The compilers and node-gyp settings for building an addon for an arch other
// than this machine's: scripts/prebuildify.js (the linux-arm64 prebuild), the
// C ABI consumer fixture the arm64 test stage loads
// (test/fixtures/build-consumer.js) and that stage's tool check
// (scripts/test-stages.mjs) all take them from here.
//
// A cross build is the same node-gyp build with CC, CXX (and prebuildify's
// strip) of the target's toolchain and node-gyp's --arch. CC_arm64, CXX_arm64
// and STRIP_arm64 override the tools.
const fs = require('node:fs');
const path = require('node:path');

/** Cross toolchains by target arch: Debian's gcc cross compilers (from a linux-x64 host). */
const CROSS = {
  arm64: { triple: 'aarch64-linux-gnu', apt: 'g++-aarch64-linux-gnu', qemu: 'qemu-aarch64', sysroot: '/usr/aarch64-linux-gnu' },
};

/** The full path of `cmd` on PATH (or `cmd` itself when it is a path that exists), or null. */
function which(cmd) {
  if (cmd.includes('/')) return fs.existsSync(cmd) ? cmd : null;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, cmd))) return path.join(dir, cmd);
  }
  return null;
}

/**
 * What builds for `arch` from here: { env, gypArgs, strip } (env and gypArgs
 * empty for this machine's arch), or { missing } saying why it cannot.
 */
function toolchain(arch) {
  if (arch === process.arch) return { env: {}, gypArgs: [], strip: 'strip' };
  const cross = CROSS[arch];
  if (!cross || process.platform !== 'linux' || process.arch !== 'x64') {
    return { missing: `no cross build for ${arch} from ${process.platform}-${process.arch}` };
  }
  const cc = process.env[`CC_${arch}`] ?? `${cross.triple}-gcc`;
  const cxx = process.env[`CXX_${arch}`] ?? `${cross.triple}-g++`;
  const strip = process.env[`STRIP_${arch}`] ?? `${cross.triple}-strip`;
  const absent = [cxx, cc, strip].filter((t) => !which(t));
  if (absent.length > 0) return { missing: `${absent.join(', ')} not found (apt-get install ${cross.apt})` };
  // node-gyp builds host tools (none here) with CC.host, the addon with CC/CXX.
  return { env: { CC: cc, CXX: cxx, CC_host: 'gcc', CXX_host: 'g++' }, gypArgs: [`--arch=${arch}`], strip };
}

/**
 * npm_config_nodedir for node-gyp when npm did not set it and this node has
 * its headers beside it (/usr/bin/node with /usr/include/node), so a build run
 * outside npm needs no header download. The Node-API headers are the same for
 * every arch.
 */
function nodedirEnv() {
  if (process.env.npm_config_nodedir) return {};
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? { npm_config_nodedir: prefix } : {};
}

/** What a prebuild is built from (relative to the package root): a newer file here makes it stale. */
const PREBUILD_SOURCES = ['package.json', 'binding.gyp', 'native/core', 'native/addon', 'native/include', 'scripts/prebuildify.js', 'scripts/cross-toolchain.js'];

function newest(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return fs.readdirSync(p).reduce((t, f) => Math.max(t, newest(path.join(p, f))), 0);
}

/** Whether prebuilds/linux-<arch>/hotspan.glibc.node under `root` is newer than every source it is built from. */
function prebuildIsFresh(root, arch) {
  const file = path.join(root, 'prebuilds', `linux-${arch}`, 'hotspan.glibc.node');
  if (!fs.existsSync(file)) return false;
  return fs.statSync(file).mtimeMs > Math.max(...PREBUILD_SOURCES.map((rel) => newest(path.join(root, rel))));
}

module.exports = { CROSS, toolchain, nodedirEnv, which, prebuildIsFresh };
