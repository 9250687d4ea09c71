// When the addon cannot load: one warning naming the reason and the js
// backend; with requireNative (or backend: 'native') the loader's error.
// Child processes: the load failure is forced by the environment, and the
// "once per process" warning needs a fresh process.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');
const dist = path.join(root, 'dist', 'index.js');

function run(body: string, env: Record<string, string>): { out: Record<string, unknown>; stderr: string } {
  const script = `
    const warnings = [];
    process.on('warning', (w) => warnings.push({ name: w.name, code: w.code, message: w.message }));
    const { Tracer } = require(${JSON.stringify(dist)});
    const out = (() => { ${body} })();
    setImmediate(() => process.stdout.write(JSON.stringify({ ...out, warnings })));
  `;
  const r = spawnSync(process.execPath, ['-e', script], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return { out: JSON.parse(r.stdout) as Record<string, unknown>, stderr: r.stderr };
}

const failing = { HOTSPAN_FORCE_LOAD_FAILURE: '1' };

describe('fallback when the addon cannot load', () => {
  it('warns once, naming the reason, and uses the js backend', () => {
    const { out, stderr } = run(
      `
      const a = new Tracer();
      const b = new Tracer({ threadName: 'second' });
      a.trace('works', () => 1);
      return { backends: [a.backend, b.backend], names: a.snapshot().map((r) => r.name) };
    `,
      failing,
    );
    expect(out.backends).toEqual(['js', 'js']);
    expect(out.names).toEqual(['works']);
    const warnings = out.warnings as Array<{ name: string; code: string; message: string }>;
    expect(warnings).toHaveLength(1);
    expect(warnings[0].code).toBe('HOTSPAN_NATIVE_UNAVAILABLE');
    expect(warnings[0].message).toMatch(/could not be loaded, using the js backend/);
    // The loader's reason is in the text.
    expect(warnings[0].message).toMatch(/HOTSPAN_FORCE_LOAD_FAILURE/);
    expect(stderr.match(/HotspanWarning/g)).toHaveLength(1);
  });

  it('throws the loader error with requireNative or backend: native, and warns for neither', () => {
    const { out } = run(
      `
      const msg = (f) => { try { f(); return null; } catch (e) { return e.name + ': ' + e.message; } };
      return {
        required: msg(() => new Tracer({ requireNative: true })),
        explicit: msg(() => new Tracer({ backend: 'native' })),
        join: msg(() => Tracer.join('some-token')),
        js: new Tracer({ backend: 'js', requireNative: true }).backend,
      };
    `,
      failing,
    );
    expect(out.required).toMatch(/^NativeLoadError: hotspan: could not load the native addon/);
    expect(out.required).toMatch(/HOTSPAN_FORCE_LOAD_FAILURE/);
    expect(out.explicit).toBe(out.required);
    expect(out.join).toMatch(/Tracer\.join\(\) needs the native backend.*did not load/s);
    expect(out.js).toBe('js');
    expect(out.warnings).toEqual([]);
  });

  it('does not warn when the addon loads', () => {
    const { out } = run(`return { backend: new Tracer().backend };`, {});
    if (out.backend === 'native') expect(out.warnings).toEqual([]);
    else expect(process.env.CI).not.toBe('true');
  });
});
