// The package as users load it: `require('hotspan')` (dist/) and
// `import('hotspan')` (esm/index.mjs), resolved by name through "exports"
// (self-reference from inside the package root). dist/ is built by the
// global setup (npm run build:ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');

function node(args: string[]): string {
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

const probe = `
  const t = new m.Tracer({ backend: 'js' });
  t.trace('x', () => 1);
  return [typeof m.Tracer, typeof m.Query, typeof m.formatStats, t.snapshot().length].join(' ');
`;

describe('package entry points', () => {
  it('has the compiled build and its types', () => {
    expect(existsSync(path.join(root, 'dist', 'index.js'))).toBe(true);
    expect(existsSync(path.join(root, 'dist', 'index.d.ts'))).toBe(true);
  });

  it('the declarations carry no test hook or package-internal member', () => {
    // @internal members (tsconfig stripInternal) and the js backend's test
    // clock (test/support/tracers.ts builds it over the backend) stay out.
    const tracer = readFileSync(path.join(root, 'dist', 'tracer', 'tracer.d.ts'), 'utf8');
    expect(tracer).toContain('export declare class Tracer');
    expect(tracer).not.toMatch(/\[internals\]|\[recording\]|tracerOver/);
    const options = readFileSync(path.join(root, 'dist', 'tracer', 'options.d.ts'), 'utf8');
    expect(options).toContain('memoryLimit?: number');
    expect(options).not.toMatch(/\bclock\?:/);
    // Package-made classes keep their constructors declared (not callable as new X()).
    const handles = readFileSync(path.join(root, 'dist', 'tracer', 'handles.d.ts'), 'utf8');
    expect(handles).toMatch(/class SpanHandle \{[^}]*constructor\(tracker: HandleTracker/);
  });

  it("require('hotspan') exposes Tracer", () => {
    expect(node(['-e', `const m = require('hotspan'); console.log((() => { ${probe} })())`])).toBe(
      'function function function 1',
    );
  });

  it("import('hotspan') exposes Tracer, the same class as require", () => {
    const out = node([
      '--input-type=module',
      '-e',
      `import * as m from 'hotspan';
       import { createRequire } from 'node:module';
       const req = createRequire(process.cwd() + '/package.json');
       console.log((() => { ${probe} })(), m.Tracer === req('hotspan').Tracer, m.default.Tracer === m.Tracer);`,
    ]);
    expect(out).toBe('function function function 1 true true');
  });
});
