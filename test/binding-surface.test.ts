// The binding's surface is written in two languages: the addon's method
// table and exports (native/addon) and its TypeScript description
// (lib/binding/native-binding.ts). Nothing generates one from the other yet,
// so this test fails on any drift: a method added on one side only. (The
// codes both sides use are generated from schema/boundary.json:
// test/gen-boundary.test.ts.)
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

import type { NativeAddon } from '../lib/binding/native-binding';
import { loadNativeAddon } from '../lib/binding/native-loader';

const root = path.join(__dirname, '..');
const read = (rel: string): string => readFileSync(path.join(root, rel), 'utf8');

/** Member names of `interface <name>` in lib/binding/native-binding.ts, sorted. */
function interfaceMembers(name: string): string[] {
  const file = 'lib/binding/native-binding.ts';
  const src = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
  for (const stmt of src.statements) {
    if (ts.isInterfaceDeclaration(stmt) && stmt.name.text === name) {
      return stmt.members.map((m) => (m.name as ts.Identifier).text).sort();
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

  it('a NativeTracer has exactly the methods the interface declares, and nothing test-only', () => {
    const t = addon.create({ originNs: 0n, threadName: 'main', wakeHighWater: 4096 });
    try {
      // Its own functions (the hot path) and its prototype's (the cold methods, shared by every tracer).
      const proto = Object.getPrototypeOf(t) as object;
      const methods = [...Object.getOwnPropertyNames(t), ...Object.getOwnPropertyNames(proto).filter((m) => m !== 'constructor')].sort();
      expect(methods).toEqual(interfaceMembers('NativeTracer'));
      for (const m of methods) expect(typeof (t as unknown as Record<string, unknown>)[m], m).toBe('function');
      expect(methods.filter((m) => /^test/i.test(m))).toEqual([]);
    } finally {
      t.close();
    }
  });
});
