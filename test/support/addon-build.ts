// Builds a small addon directory (binding.gyp + sources) with the project's
// node-gyp when its .node is missing or older than any of its sources or
// the headers it includes (native/include). For the suites that test the
// C++ header with their own addons (test/native-hpp.test.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..', '..');
const include = path.join(root, 'native', 'include');

function mtime(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

// node-gyp run directly (not through npm) does not see npm's nodedir: use the
// headers installed next to this node when there are some (no download).
function nodedirArgs(): string[] {
  if (process.env.npm_config_nodedir) return [`--nodedir=${process.env.npm_config_nodedir}`];
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${prefix}`] : [];
}

/** The absolute path of `<dir>/build/Release/<target>.node`, built first if stale; throws why not. */
export function buildAddon(dir: string, target: string): string {
  const output = path.join(dir, 'build', 'Release', `${target}.node`);
  const sources = [
    ...readdirSync(dir).filter((f) => /\.(cc|h|hpp|gyp)$/.test(f)).map((f) => path.join(dir, f)),
    ...readdirSync(include).map((f) => path.join(include, f)),
  ];
  const built = mtime(output);
  if (built >= 0 && sources.every((s) => mtime(s) <= built)) return output;
  const gyp = createRequire(path.join(root, 'package.json')).resolve('node-gyp/bin/node-gyp.js');
  const r = spawnSync(process.execPath, [gyp, 'rebuild', '-j', '2', ...nodedirArgs()], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) {
    const why = r.error ? String(r.error) : `exit code ${r.status}`;
    throw new Error(`building ${path.relative(root, dir)} failed (${why}):\n${r.stdout ?? ''}\n${r.stderr ?? ''}`);
  }
  if (!existsSync(output)) throw new Error(`node-gyp succeeded but ${output} is missing`);
  return output;
}
