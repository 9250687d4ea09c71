// When a run chooses an addon build with HOTSPAN_PREBUILD (node-gyp-build's
// own override, e.g. the sanitizer builds of native/test/sanitizers.sh), the
// tests must run on that build. The loader would fall back to build/Release
// or the js backend if it failed to load, so here it is loaded first, and an
// error fails the test file; at the end of the file no other hotspan.node
// may be mapped in this process.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { afterAll } from 'vitest';

const chosen = process.env.HOTSPAN_PREBUILD;
if (chosen) {
  const root = path.join(__dirname, '..', '..');
  const requireFromRoot = createRequire(path.join(root, 'package.json'));
  const gypBuild = requireFromRoot('node-gyp-build') as { path(dir: string): string };
  const file = gypBuild.path(root);
  if (!file.startsWith(path.resolve(chosen) + path.sep)) {
    throw new Error(`HOTSPAN_PREBUILD=${chosen} but node-gyp-build resolves ${file}`);
  }
  requireFromRoot(file);
  afterAll(() => {
    const mapped = new Set(
      readFileSync('/proc/self/maps', 'utf8')
        .split('\n')
        .map((line) => line.slice(line.indexOf('/')))
        .filter((p) => p.endsWith('/hotspan.node')),
    );
    const others = [...mapped].filter((p) => p !== file);
    if (others.length > 0) throw new Error(`an addon other than ${file} was loaded: ${others.join(', ')}`);
  });
}
