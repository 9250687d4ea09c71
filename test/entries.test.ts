// Every name an entry point declares is there at run time: for each of
// `hotspan`, `hotspan/otel` and `hotspan/auto`, in both module systems, the
// value exports of the declarations the package's "exports" map gives that
// condition (read with the TypeScript compiler API), checked defined in a
// child process that loads the entry by name through that map (the package
// resolving itself from its own folder). And the ESM entries, generated from
// the CommonJS build (scripts/esm-entries.mjs), are what the build gives now.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-entries-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Condition = 'require' | 'import';
type Target = string | { types?: string; default?: string; import?: Target; require?: Target };

const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, Target> };

/** The declaration file the exports map gives `condition` for `subpath` (as TypeScript resolves it: a condition's types first). */
function typesFor(subpath: string, condition: Condition): string {
  const t = pkg.exports[subpath];
  if (typeof t === 'string') throw new Error(`${subpath}: no types in the exports map`);
  const under = t[condition];
  const file = (typeof under === 'object' ? under.types : undefined) ?? t.types;
  if (file === undefined) throw new Error(`${subpath} (${condition}): no types in the exports map`);
  return path.join(root, file);
}

/** The value (not type-only) names a declaration file exports, re-exports followed; the default export left out. */
const declared = new Map<string, string[]>();

function declaredValues(file: string): string[] {
  const known = declared.get(file);
  if (known !== undefined) return known;
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (source === undefined) throw new Error(`${file}: not read`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) throw new Error(`${file}: not a module`);
  const names: string[] = [];
  for (const sym of checker.getExportsOfModule(moduleSymbol)) {
    const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
    if (sym.escapedName !== 'default' && target.flags & ts.SymbolFlags.Value) names.push(sym.name);
  }
  names.sort();
  declared.set(file, names);
  return names;
}

/** The names of `names` that `specifier`, loaded by `condition` from the package folder, has undefined. */
function missingAtRunTime(specifier: string, condition: Condition, names: string[]): string[] {
  const list = JSON.stringify(names);
  const report = `process.stdout.write(JSON.stringify(${list}.filter((n) => m[n] === undefined)));`;
  const args =
    condition === 'require'
      ? ['-e', `const m = require(${JSON.stringify(specifier)}); ${report}`]
      : ['--input-type=module', '-e', `const m = await import(${JSON.stringify(specifier)}); ${report}`];
  const r = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    // hotspan/auto traces the child: its file goes here.
    env: { ...process.env, HOTSPAN_OUT: path.join(tmp, `${specifier.replace('/', '-')}-${condition}.json`), HOTSPAN_INSTRUMENT: 'gc' },
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as string[];
}

const ENTRIES: Array<[specifier: string, subpath: string]> = [
  [pkg.name, '.'],
  [`${pkg.name}/otel`, './otel'],
  [`${pkg.name}/auto`, './auto'],
];

describe('entry points', () => {
  it('the exports map has exactly these entries (and package.json)', () => {
    expect(Object.keys(pkg.exports).sort()).toEqual([...ENTRIES.map(([, sub]) => sub), './package.json'].sort());
  });

  for (const [specifier, subpath] of ENTRIES) {
    for (const condition of ['require', 'import'] as const) {
      it(`${condition} ${specifier}: every declared value export is defined`, () => {
        const names = declaredValues(typesFor(subpath, condition));
        expect(names.length, 'declared values').toBeGreaterThan(0);
        expect(missingAtRunTime(specifier, condition, names), `declared in ${typesFor(subpath, condition)}, undefined at run time`).toEqual([]);
      }, 60_000);
    }
  }

  it('both module systems declare the same values', () => {
    for (const [, subpath] of ENTRIES) expect(declaredValues(typesFor(subpath, 'import')), subpath).toEqual(declaredValues(typesFor(subpath, 'require')));
  }, 60_000);

  it('the committed ESM entries are what scripts/esm-entries.mjs makes from the build', () => {
    const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'esm-entries.mjs'), '--check'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  }, 60_000);
});
