// Builds dist/ once before any test file runs: the child-process, worker and
// package tests load the compiled CommonJS (a worker or a plain `node` cannot
// run the TypeScript sources), and building it once avoids test files racing
// each other to write dist/. HOTSPAN_DIST_BUILT=1: the caller has just built
// it (the arm64 stage, whose emulated node would take minutes over tsc).
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as path from 'node:path';

export default function setup(): void {
  if (process.env.HOTSPAN_DIST_BUILT === '1') return;
  const root = path.join(__dirname, '..');
  const tsc = createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
}
