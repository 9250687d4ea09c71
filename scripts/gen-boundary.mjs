#!/usr/bin/env node
// The codes that cross hotspan's boundaries (status codes, span flags, the
// NativeSnapshot record columns, the WebAssembly core's entry points, the
// addon's tracer methods),
// written from their one source, schema/boundary.json, into the blocks
// marked `<generated ...>` ... `</generated>` of the files below (one block a file):
//
//   node scripts/gen-boundary.mjs           rewrites the blocks (npm run gen)
//   node scripts/gen-boundary.mjs --check   changes nothing; exits 1 naming
//                                           each file whose block differs
//                                           (npm test's typecheck stage)
//
// Only the lines between the markers are written; the rest of each file is
// its own.
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = 'schema/boundary.json';
const schema = JSON.parse(readFileSync(path.join(root, SOURCE), 'utf8'));
const check = process.argv.includes('--check');

/** OK -> Ok, NO_OPEN_SPAN -> NoOpenSpan. */
const camel = (name) =>
  name
    .toLowerCase()
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

/** A C parameter declaration, `const double* counts`: its type and name. */
function cParam(decl) {
  const m = /^(.*?)\s*\b([a-z_][a-z0-9_]*)$/i.exec(decl.trim());
  if (!m) throw new Error(`gen-boundary: a wasm export parameter must read "<C type> <name>", got ${JSON.stringify(decl)}`);
  return { type: m[1], name: m[2] };
}

/** The TypeScript type of a C type across the wasm32 boundary. */
function tsType(type) {
  if (type === 'void') return 'void';
  if (type.endsWith('*')) return 'number'; // a wasm32 address
  if (type === 'int64_t' || type === 'uint64_t') return 'bigint';
  if (['int32_t', 'uint32_t', 'double'].includes(type)) return 'number';
  throw new Error(`gen-boundary: no TypeScript type for the C type ${type}`);
}

/** origin_ns -> originNs. */
const lowerCamel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

const wasm = schema.wasm;

// The per-span entry points: at most perSpanLimit (issue 31), each a hot
// method (an own function of the tracer object, span_calls.h).
const perSpan = schema.tracerMethods.methods.filter((m) => m.perSpan === true);
for (const m of perSpan) {
  if (m.hot === undefined) throw new Error(`gen-boundary: per-span tracer method ${JSON.stringify(m.name)} must be hot`);
}
if (perSpan.length > schema.tracerMethods.perSpanLimit) {
  throw new Error(
    `gen-boundary: ${String(perSpan.length)} per-span tracer methods (${perSpan.map((m) => m.name).join(', ')}), at most ${String(schema.tracerMethods.perSpanLimit)}: give a new form to an existing entry (native/addon/span_calls.cc)`,
  );
}

// Each target: a file and the lines of its block.
const targets = [
  {
    file: 'native/include/hotspan.h',
    lines: () => [
      'typedef enum hotspan_status {',
      ...schema.status.map((s, i) => `  HOTSPAN_${s.name} = ${String(s.value)}${i + 1 < schema.status.length ? ',' : ''} /* ${s.doc} */`),
      '} hotspan_status;',
    ],
  },
  {
    file: 'native/core/record/tracer.h',
    lines: () => ['enum class Status : int {', ...schema.status.map((s) => `  k${camel(s.name)} = HOTSPAN_${s.name},  // ${s.doc}`), '};'],
  },
  {
    file: 'native/core/record/span_record.h',
    lines: () => [
      'enum SpanFlags : uint16_t {',
      ...schema.spanFlags.map((f) => `  kFlag${camel(f.name)} = 1u << ${String(f.bit)},  // ${f.doc}`),
      '};',
      '',
      '// The NativeSnapshot `fields` column (the addon writes it; the js backend',
      '// and the WebAssembly core read it): these uint32 fields per record.',
      'enum RecordField : uint32_t {',
      ...schema.recordFields.map((f, i) => `  kField${camel(f.name)} = ${String(i)},  // ${f.doc}`),
      `  kFieldsPerRecord = ${String(schema.recordFields.length)},`,
      '};',
    ],
  },
  {
    file: 'lib/common/flags.ts',
    lines: () => [
      ...schema.spanFlags.map((f) => `/** Span flag: ${f.doc}. */\nexport const FLAG_${f.name} = ${String(2 ** f.bit)};`),
      ...schema.status.map((s) => `/** Status code: ${s.doc}. */\nexport const STATUS_${s.name} = ${String(s.value)};`),
      ...schema.recordFields.map((f, i) => `/** NativeSnapshot.fields, per record: ${f.doc}. */\nexport const FIELD_${f.name} = ${String(i)};`),
      `/** uint32 fields per record in NativeSnapshot.fields. */\nexport const FIELDS_PER_RECORD = ${String(schema.recordFields.length)};`,
    ],
  },
  {
    file: 'native/wasm/exports.h',
    lines: () => [
      `enum Format : uint32_t { ${wasm.formats.map((f) => `k${camel(f.name)} = ${String(f.value)}`).join(', ')} };`,
      'enum Status : int32_t {',
      ...wasm.status.map((s) => `  k${camel(s.name)} = ${String(s.value)},  // ${s.doc}`),
      '};',
      `// f64 per stats row: ${wasm.statsRow.join(', ')}.`,
      `constexpr uint32_t kStatsRowDoubles = ${String(wasm.statsRow.length)};`,
      '',
      'struct QueryColumns;',
      '',
      'extern "C" {',
      ...wasm.exports.flatMap((e) => [
        `// ${e.doc}`,
        `__attribute__((export_name("${e.name}"))) ${e.returns} ${e.name}(${e.params.map((p) => p.trim()).join(', ')});`,
      ]),
      '}  // extern "C"',
    ],
  },
  {
    file: 'native/addon/tracer_object.cc',
    lines: () => [
      'const Method kMethods[] = {',
      ...schema.tracerMethods.methods.map((m) => {
        if (m.hot !== undefined) return `    {"${m.name}", &${m.hot}, nullptr},`;
        if (m.cold !== undefined) return `    {"${m.name}", nullptr, &Cold<${m.cold}>},`;
        if (m.coldVoid !== undefined) return `    {"${m.name}", nullptr, &ColdVoid<${m.coldVoid}>},`;
        throw new Error(`gen-boundary: tracer method ${JSON.stringify(m.name)} names no hot, cold or coldVoid callback`);
      }),
      '};',
    ],
  },
  {
    file: 'lib/binding/native-binding.ts',
    lines: () => [
      '/** The methods of a NativeTracer, as the addon makes them (the type-check holds NativeTracer to these). */',
      'export type NativeTracerMethod =',
      ...schema.tracerMethods.methods.map((m, i, all) => `  | '${m.name}'${i + 1 === all.length ? ';' : ''}`),
      '/** The per-span entry points among them (schema perSpan; native/addon/span_calls.h). */',
      `export const PER_SPAN_METHODS: readonly NativeTracerMethod[] = [${perSpan.map((m) => `'${m.name}'`).join(', ')}];`,
      '/** The most per-span entry points the schema allows (gen-boundary refuses more). */',
      `export const PER_SPAN_LIMIT = ${String(schema.tracerMethods.perSpanLimit)};`,
      ...schema.tracerMethods.spanFormTags.map((t) => `/** A per-span entry's form tag (native/addon/span_calls.h): ${t.doc}. */\nexport const TAG_${t.name} = ${t.type === 'uint32_t' ? t.value.toLowerCase() : t.value};`),
    ],
  },
  {
    file: 'native/addon/span_calls.h',
    lines: () =>
      schema.tracerMethods.spanFormTags.flatMap((t) => [
        `// ${t.doc}.`,
        `constexpr ${t.type} k${camel(t.name)} = ${t.type === 'uint32_t' ? `${t.value}u` : t.value};`,
      ]),
  },
  {
    file: 'lib/binding/wasm-core.ts',
    lines: () => [
      "/** native/wasm/exports.h's entry points, as the module's exports. */",
      'export interface WasmExports {',
      ...wasm.exports.flatMap((e) => {
        const params = e.params.map(cParam).map((p) => `${lowerCamel(p.name)}: ${tsType(p.type)}`);
        return [`  /** ${e.doc} */`, `  ${e.name}(${params.join(', ')}): ${tsType(e.returns)};`];
      }),
      '}',
      '/** hs_write and hs_writer_begin: the code of each output format. */',
      `export const FORMAT_CODES = { ${wasm.formats.map((f) => `${f.output}: ${String(f.value)}`).join(', ')} } as const;`,
      "/** The entry points' status codes: what each says, by code. */",
      `export const STATUS_TEXT = [${[...wasm.status].sort((x, y) => x.value - y.value).map((s) => `'${s.doc}'`).join(', ')}];`,
      `/** f64 per stats row (hs_stats): ${wasm.statsRow.join(', ')}. */`,
      `const STATS_ROW_DOUBLES = ${String(wasm.statsRow.length)};`,
    ],
  },
];

const OPEN = /^(\s*)(\/\/|\/\*) <generated\b.*$/m;
const CLOSE = /^\s*(\/\/|\/\*) <\/generated>.*$/m;

function rewrite(text, file, lines) {
  const open = OPEN.exec(text);
  if (!open) throw new Error(`gen-boundary: ${file} has no <generated> block`);
  const afterOpen = open.index + open[0].length + 1;
  const close = CLOSE.exec(text.slice(afterOpen));
  if (!close) throw new Error(`gen-boundary: ${file}'s <generated> block has no </generated>`);
  const body = lines.join('\n');
  return text.slice(0, afterOpen) + body + '\n' + text.slice(afterOpen + close.index);
}

let stale = 0;
for (const t of targets) {
  const full = path.join(root, t.file);
  const before = readFileSync(full, 'utf8');
  const after = rewrite(before, t.file, t.lines());
  if (after === before) continue;
  if (check) {
    console.error(`gen-boundary: ${t.file} differs from what ${SOURCE} makes; run npm run gen`);
    stale++;
  } else {
    writeFileSync(full, after);
    console.log(`gen-boundary: wrote ${t.file}`);
  }
}
if (stale > 0) process.exit(1);
