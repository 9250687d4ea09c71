// scripts/gen-boundary.mjs: the status codes, span flags and NativeSnapshot
// record columns that cross the C ABI, the core, the addon, the WebAssembly
// core and the facade, the WebAssembly core's entry points and the addon's
// tracer methods come from schema/boundary.json. The committed files are
// what it writes; a copy whose source changed fails --check, naming every
// file it would rewrite, and is rewritten by a run.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import * as flags from '../lib/common/flags';

const root = path.join(__dirname, '..');
const TARGETS = [
  'native/include/hotspan.h',
  'native/core/record/tracer.h',
  'native/core/record/span_record.h',
  'lib/common/flags.ts',
  'native/addon/tracer_object.cc',
  'native/addon/span_calls.h',
  'lib/binding/native-binding.ts',
  'native/wasm/exports.h',
  'lib/binding/wasm-core.ts',
];
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-gen-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function gen(dir: string, ...args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(dir, 'scripts', 'gen-boundary.mjs'), ...args], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

interface Schema {
  status: Array<{ name: string; value: number }>;
  spanFlags: Array<{ name: string; bit: number }>;
  recordFields: Array<{ name: string }>;
  tracerMethods: { perSpanLimit: number; spanFormTags: Array<{ name: string; value: string }>; methods: Array<{ name: string; cold?: string; hot?: string; perSpan?: boolean }> };
  wasm: { status: Array<{ name: string; value: number; doc: string }>; exports: Array<{ name: string; params: string[] }> };
}

describe('the boundary codes', () => {
  it('the committed files are what schema/boundary.json makes', () => {
    expect(gen(root, '--check')).toEqual({ status: 0, stderr: '' });
  });

  it("the facade's constants are the schema's", () => {
    const schema = JSON.parse(readFileSync(path.join(root, 'schema', 'boundary.json'), 'utf8')) as Schema;
    const table = flags as unknown as Record<string, number>;
    for (const s of schema.status) expect(table[`STATUS_${s.name}`], s.name).toBe(s.value);
    for (const f of schema.spanFlags) expect(table[`FLAG_${f.name}`], f.name).toBe(2 ** f.bit);
    schema.recordFields.forEach((f, i) => expect(table[`FIELD_${f.name}`], f.name).toBe(i));
    expect(flags.FIELDS_PER_RECORD).toBe(schema.recordFields.length);
  });

  it("the committed .wasm exports exactly the schema's entry points", () => {
    const schema = JSON.parse(readFileSync(path.join(root, 'schema', 'boundary.json'), 'utf8')) as Schema;
    const wasmApi = (globalThis as unknown as { WebAssembly: { Module: { new (b: Uint8Array): object; exports(m: object): Array<{ name: string; kind: string }> } } })
      .WebAssembly.Module;
    const mod = new wasmApi(readFileSync(path.join(root, 'native', 'wasm', 'hotspan_core.wasm')));
    const functions = wasmApi.exports(mod).filter((e) => e.kind === 'function').map((e) => e.name);
    expect(functions.sort()).toEqual(['_initialize', ...schema.wasm.exports.map((e) => e.name)].sort());
  });

  it('a changed source fails --check naming each file, and a run rewrites them', () => {
    const dir = path.join(tmp, 'copy');
    for (const f of ['scripts/gen-boundary.mjs', 'schema/boundary.json', ...TARGETS]) cpSync(path.join(root, f), path.join(dir, f));
    const schemaFile = path.join(dir, 'schema', 'boundary.json');
    const schema = JSON.parse(readFileSync(schemaFile, 'utf8')) as Schema;
    schema.status.push({ name: 'BUSY', value: 4 });
    schema.spanFlags[2].bit = 6;
    schema.wasm.status.push({ name: 'BUSY', value: 4, doc: 'busy' });
    schema.tracerMethods.methods.push({ name: 'busy', cold: 'Busy' });
    schema.tracerMethods.spanFormTags[0].value = '0xFFFFFFFD';
    schema.wasm.exports.find((e) => e.name === 'hs_free')?.params.push('uint32_t bytes');
    writeFileSync(schemaFile, JSON.stringify({ ...schema, status: schema.status.map((s) => ({ doc: 'x', ...s })) }));
    const r = gen(dir, '--check');
    expect(r.status).toBe(1);
    for (const f of TARGETS) expect(r.stderr).toContain(`gen-boundary: ${f} differs from what schema/boundary.json makes`);
    expect(gen(dir).status).toBe(0);
    expect(gen(dir, '--check')).toEqual({ status: 0, stderr: '' });
    expect(readFileSync(path.join(dir, 'native/include/hotspan.h'), 'utf8')).toContain('HOTSPAN_BUSY = 4 /* x */');
    expect(readFileSync(path.join(dir, 'native/core/record/tracer.h'), 'utf8')).toContain('kBusy = HOTSPAN_BUSY,');
    expect(readFileSync(path.join(dir, 'native/core/record/span_record.h'), 'utf8')).toContain('kFlagError = 1u << 6,');
    expect(readFileSync(path.join(dir, 'lib/common/flags.ts'), 'utf8')).toContain('export const FLAG_ERROR = 64;');
    expect(readFileSync(path.join(dir, 'native/wasm/exports.h'), 'utf8')).toContain('void hs_free(uint8_t* p, uint32_t bytes);');
    expect(readFileSync(path.join(dir, 'native/wasm/exports.h'), 'utf8')).toContain('kBusy = 4,  // busy');
    expect(readFileSync(path.join(dir, 'native/addon/tracer_object.cc'), 'utf8')).toContain('{"busy", nullptr, &Cold<Busy>},');
    expect(readFileSync(path.join(dir, 'lib/binding/native-binding.ts'), 'utf8')).toContain("  | 'busy';");
    const ts = readFileSync(path.join(dir, 'lib/binding/wasm-core.ts'), 'utf8');
    expect(ts).toContain('hs_free(p: number, bytes: number): void;');
    expect(ts).toContain("const STATUS_TEXT = ['ok', 'malformed columns', 'unknown format', 'unknown writer handle', 'busy'];");
  });

  it('a wasm export parameter it cannot type fails, naming it', () => {
    const dir = path.join(tmp, 'bad');
    for (const f of ['scripts/gen-boundary.mjs', 'schema/boundary.json', ...TARGETS]) cpSync(path.join(root, f), path.join(dir, f));
    const schemaFile = path.join(dir, 'schema', 'boundary.json');
    const schema = JSON.parse(readFileSync(schemaFile, 'utf8')) as Schema;
    schema.wasm.exports[0].params.push('float ratio');
    writeFileSync(schemaFile, JSON.stringify(schema));
    const r = gen(dir, '--check');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('gen-boundary: no TypeScript type for the C type float');
  });

  // Issue 31: at most perSpanLimit per-span entry points. One more marked
  // perSpan (a 7th once the limit is reached) fails, naming them all; so
  // does a per-span method that is not a hot one.
  it('more per-span tracer methods than perSpanLimit fail, naming them', () => {
    const dir = path.join(tmp, 'perspan');
    for (const f of ['scripts/gen-boundary.mjs', 'schema/boundary.json', ...TARGETS]) cpSync(path.join(root, f), path.join(dir, f));
    const schemaFile = path.join(dir, 'schema', 'boundary.json');
    const schema = JSON.parse(readFileSync(schemaFile, 'utf8')) as Schema;
    const methods = schema.tracerMethods.methods;
    const marked = methods.filter((m) => m.perSpan === true).length;
    expect(marked).toBeLessThanOrEqual(schema.tracerMethods.perSpanLimit);
    // The limit exactly: accepted (and the copy's generated files then differ only in the list).
    for (let k = marked; k < schema.tracerMethods.perSpanLimit; k++) methods.push({ name: `extra${String(k)}`, hot: 'span_calls::Begin', perSpan: true });
    writeFileSync(schemaFile, JSON.stringify(schema));
    expect(gen(dir).status).toBe(0);
    methods.push({ name: 'oneTooMany', hot: 'span_calls::Begin', perSpan: true });
    writeFileSync(schemaFile, JSON.stringify(schema));
    const r = gen(dir, '--check');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`gen-boundary: ${String(schema.tracerMethods.perSpanLimit + 1)} per-span tracer methods (begin, end,`);
    expect(r.stderr).toContain('oneTooMany), at most 6');
    methods.pop();
    methods.push({ name: 'coldPerSpan', cold: 'Pending', perSpan: true });
    methods.splice(methods.findIndex((m) => m.name === 'extra4'), 1);
    writeFileSync(schemaFile, JSON.stringify(schema));
    expect(gen(dir, '--check').stderr).toContain('gen-boundary: per-span tracer method "coldPerSpan" must be hot');
  });
});
