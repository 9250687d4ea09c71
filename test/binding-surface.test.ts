// The binding's surface is written in three languages: the addon's method
// table and exports (native/addon), its TypeScript description
// (lib/binding/native-binding.ts) and the codes both sides use (native/include/hotspan.h
// `hotspan_status`, which native/core/record/tracer.h `Status` is defined from;
// lib/common/flags.ts; span flags in native/core/record/span_record.h). Nothing generates one
// from another, so this test reads each source and fails on any drift: a
// method added on one side only, a code or flag renumbered on one side.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

import * as flags from '../lib/common/flags';
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

/** A C enumerator's value: a number, or `A << B` ("1u << 3"). */
function cValue(expr: string): number {
  const shift = /^(\d+)u?\s*<<\s*(\d+)$/.exec(expr);
  const v = shift ? Number(shift[1]) * 2 ** Number(shift[2]) : Number(expr);
  if (!Number.isInteger(v)) throw new Error(`cannot read the C value '${expr}'`);
  return v;
}

/** NAME -> value of the enumerators of C `enum <tag> { ... }` in a header. */
function cEnum(rel: string, tag: string, prefix: string): Map<string, number> {
  const text = read(rel);
  const body = new RegExp(`enum\\s+${tag}\\s*(?::\\s*\\w+\\s*)?\\{([^}]*)\\}`).exec(text);
  if (!body) throw new Error(`enum ${tag} not found in ${rel}`);
  const out = new Map<string, number>();
  for (const m of body[1].replace(/\/\/.*$|\/\*[^]*?\*\//gm, '').matchAll(new RegExp(`\\b${prefix}(\\w+)\\s*=\\s*([^,]+)`, 'g'))) {
    out.set(m[1], cValue(m[2].trim()));
  }
  return out;
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

  it("status codes: hotspan.h, tracer.h's Status and lib/common/flags.ts agree", () => {
    const c = cEnum('native/include/hotspan.h', 'hotspan_status', 'HOTSPAN_');
    expect(c.size).toBeGreaterThan(0);
    // tracer.h spells every enumerator as the C code of the same name.
    const core = /enum class Status[^{]*\{([^}]*)\}/.exec(read('native/core/record/tracer.h'));
    expect(core, 'enum class Status in tracer.h').not.toBeNull();
    const pairs = [...core![1].matchAll(/\bk(\w+)\s*=\s*([^,\s]+)/g)].map((m) => [m[1], m[2]]);
    const snake = (camel: string) => camel.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
    expect(pairs.map(([k, v]) => [snake(k), v])).toEqual([...c.keys()].map((n) => [n, `HOTSPAN_${n}`]));
    const lib = Object.entries(flags)
      .filter(([k]) => k.startsWith('STATUS_'))
      .map(([k, v]) => [k.slice('STATUS_'.length), v]);
    expect(new Map(lib as Array<[string, number]>)).toEqual(c);
  });

  it('span flags: span_record.h and lib/common/flags.ts agree', () => {
    const c = cEnum('native/core/record/span_record.h', 'SpanFlags', 'kFlag');
    const snake = (camel: string) => camel.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
    const fromC = new Map([...c].map(([k, v]) => [snake(k), v]));
    const lib = Object.entries(flags)
      .filter(([k]) => k.startsWith('FLAG_'))
      .map(([k, v]) => [k.slice('FLAG_'.length), v]);
    expect(new Map(lib as Array<[string, number]>)).toEqual(fromC);
  });
});
