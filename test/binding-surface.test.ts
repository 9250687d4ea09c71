// The binding's surface as the addon makes it, against what the facade
// expects. A tracer object's methods come from schema/boundary.json (the
// addon's method table is generated from it, and the type-check holds
// NativeTracer to it: test/gen-boundary.test.ts); this test checks the
// built addon makes exactly those. The addon's exports are declared by
// hand in lib/binding/native-binding.ts (NativeAddon) and checked here.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

import { PER_SPAN_LIMIT, PER_SPAN_METHODS, type NativeAddon } from '../lib/binding/native-binding';
import { loadNativeAddon } from '../lib/binding/native-loader';

const root = path.join(__dirname, '..');
const read = (rel: string): string => readFileSync(path.join(root, rel), 'utf8');

/** Member names of `interface <name>` in lib/binding/native-binding.ts, sorted (an overloaded method once). */
function interfaceMembers(name: string): string[] {
  const file = 'lib/binding/native-binding.ts';
  const src = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
  for (const stmt of src.statements) {
    if (ts.isInterfaceDeclaration(stmt) && stmt.name.text === name) {
      return [...new Set(stmt.members.map((m) => (m.name as ts.Identifier).text))].sort();
    }
  }
  throw new Error(`interface ${name} not found in ${file}`);
}

let addon: NativeAddon;

beforeAll(() => {
  const result = loadNativeAddon();
  if (!result.addon) throw result.error ?? new Error('no addon and no error');
  addon = result.addon;
});

describe('binding surface', () => {
  it('the addon exports exactly what NativeAddon declares', () => {
    expect(Object.keys(addon).sort()).toEqual(interfaceMembers('NativeAddon'));
  });

  it('a NativeTracer has exactly the methods the schema lists and the interface declares, and nothing test-only', () => {
    const t = addon.create({ originNs: 0n, threadName: 'main', wakeHighWater: 4096 });
    try {
      // Its own functions (the hot path) and its prototype's (the cold methods, shared by every tracer).
      const proto = Object.getPrototypeOf(t) as object;
      const methods = [...Object.getOwnPropertyNames(t), ...Object.getOwnPropertyNames(proto).filter((m) => m !== 'constructor')].sort();
      const schema = JSON.parse(read('schema/boundary.json')) as { tracerMethods: { methods: Array<{ name: string }> } };
      expect(methods).toEqual(schema.tracerMethods.methods.map((m) => m.name).sort());
      expect(methods).toEqual(interfaceMembers('NativeTracer'));
      for (const m of methods) expect(typeof (t as unknown as Record<string, unknown>)[m], m).toBe('function');
      expect(methods.filter((m) => /^test/i.test(m))).toEqual([]);
    } finally {
      t.close();
    }
  });

  // Issue 31: at most PER_SPAN_LIMIT per-span entry points, each one
  // function over its argument forms (native/addon/span_calls.h). The
  // schema's perSpan marks are the one list: gen-boundary refuses more than
  // the limit, and the generated PER_SPAN_METHODS must be exactly the
  // tracer object's own functions that are not its setup calls.
  it('a NativeTracer has at most PER_SPAN_LIMIT per-span entry points, exactly the schema\'s perSpan ones', () => {
    type Method = { name: string; hot?: string; perSpan?: boolean };
    const schema = JSON.parse(read('schema/boundary.json')) as { tracerMethods: { perSpanLimit: number; methods: Method[] } };
    const perSpan = schema.tracerMethods.methods.filter((m) => m.perSpan === true).map((m) => m.name);
    expect([...PER_SPAN_METHODS]).toEqual(perSpan);
    expect(PER_SPAN_LIMIT).toBe(schema.tracerMethods.perSpanLimit);
    expect(PER_SPAN_LIMIT).toBeLessThanOrEqual(6);
    expect(PER_SPAN_METHODS.length).toBeLessThanOrEqual(PER_SPAN_LIMIT);
    const t = addon.create({ originNs: 0n, threadName: 'main', wakeHighWater: 4096 });
    try {
      // The hot methods are the tracer object's own functions: the per-span
      // entries and the views / interning its facade takes once.
      const own = Object.getOwnPropertyNames(t).sort();
      const setup = ['asyncView', 'defineShape', 'defineValue', 'slotView'];
      expect(own.filter((m) => !setup.includes(m))).toEqual([...PER_SPAN_METHODS].sort());
    } finally {
      t.close();
    }
  });
});
