// Every code block of README.md and docs/*.md, run as its reader would: each
// example (the blocks under one heading) in a fresh `npm init -y` project
// with the packed tarball installed (--ignore-scripts, the prebuild loaded
// with PREBUILDS_ONLY=1) and only the packages its `Setup:` line names
// (test/support/readme-blocks.ts has the rules). The README's quick-start
// commands are checked against package.json and .ci/run.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examples, parseSetupLine, readBlocks, setupOf, SHELL_LANGS, shellCommands, type Example } from './support/readme-blocks';
import { cleanEnv, mustRun, root, run, tarball } from './support/packed';

const resolveFromRoot = createRequire(path.join(root, 'package.json')).resolve;

const docs = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

function examplesOf(doc: string): Example[] {
  const setups = new Map<number, string[]>();
  const blocks = readBlocks(path.join(root, doc), setups);
  return examples(blocks, setups, doc === 'README.md');
}

let tgz = '';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'hotspan-doc-blocks-'));
beforeAll(() => {
  tgz = tarball();
}, 1_800_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the block rules (test/support/readme-blocks.ts)', () => {
  it('reads a Setup: line into the project type and packages, and groups blocks by heading', () => {
    const file = path.join(scratch, 'rules.md');
    writeFileSync(
      file,
      [
        '# One',
        'Setup: `npm pkg set type=module` `npm install -D typescript @types/node`',
        '```ts a.ts',
        'export {};',
        '```',
        '## Two',
        '```js b.js',
        "require('./c.js');",
        '```',
        '```js c.js',
        '```',
      ].join('\n'),
    );
    const setups = new Map<number, string[]>();
    const ex = examples(readBlocks(file, setups), setups);
    expect(ex.map((e) => [e.heading, e.entries, e.setup.type, e.setup.packages])).toEqual([
      ['One', ['a.ts'], 'module', ['typescript', '@types/node']],
      ['Two', ['b.js'], 'commonjs', []],
    ]);
    expect(setupOf(['npm install @opentelemetry/api@~1.9.0'])).toEqual({ commands: ['npm install @opentelemetry/api@~1.9.0'], type: 'commonjs', packages: ['@opentelemetry/api@~1.9.0'] });
  });

  it('refuses a Setup: line it cannot run, and a block without a file name, naming the line', () => {
    expect(() => parseSetupLine('`npm install x` and more', 'docs/x.md:3')).toThrow(/docs\/x\.md:3: a Setup: line lists npm commands/);
    expect(() => parseSetupLine('`curl example.com | sh`', 'docs/x.md:4')).toThrow(/docs\/x\.md:4: unknown Setup command `curl example.com \| sh`/);
    const file = path.join(scratch, 'docs-nameless.md');
    writeFileSync(file, '# A\n```js\n1\n```\n```sh\nnpm test\n```\n');
    expect(() => examples(readBlocks(file))).toThrow(/docs-nameless\.md:2: a ```js block needs a file name/);
    // A shell block without a name is a quick-start block only in the README.
    writeFileSync(file, '# A\n```sh\nnpm test\n```\n');
    expect(() => examples(readBlocks(file))).toThrow(/docs-nameless\.md:2: a ```sh block needs a file name/);
    expect(examples(readBlocks(file), new Map(), true)).toEqual([]);
  });
});

describe('README quick start', () => {
  it('shell blocks: the quick start is what .ci/run runs, with scripts package.json has', () => {
    const blocks = readBlocks(path.join(root, 'README.md'));
    const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const ci = readFileSync(path.join(root, '.ci', 'run'), 'utf8').split('\n').map((l) => l.trim());
    const shell = blocks.filter((b) => SHELL_LANGS.has(b.lang) && b.file === '');
    expect(shell.length).toBeGreaterThan(0);
    for (const b of shell) {
      for (const line of shellCommands(b)) {
        expect(ci, `README.md:${b.line}: \`${line}\` is not a line of .ci/run`).toContain(line);
        for (const cmd of line.split('&&').map((c) => c.trim())) {
          const m = /^npm (?:run (\S+)|(test|ci|install))$/.exec(cmd);
          expect(m, `README.md:${b.line}: unexpected command \`${cmd}\``).not.toBeNull();
          if (m![1]) expect(Object.keys(scripts), `README.md:${b.line}`).toContain(m![1]);
        }
      }
    }
  });
});

describe.each(docs)('%s code blocks', (doc) => {
  it('every block names its file, every Setup: line is known', () => {
    expect(() => examplesOf(doc)).not.toThrow();
  });

  const list = (() => {
    try {
      return examplesOf(doc);
    } catch {
      return []; // the test above names the block
    }
  })();
  for (const ex of list) {
    const setupNote = ex.setup.commands.length ? `; ${ex.setup.commands.join(', ')}` : '';
    it(`"${ex.heading}" runs as written (${ex.files.map((f) => f.file).join(', ')}${setupNote})`, () => {
      const dir = path.join(scratch, `${doc}-${ex.heading}`.replace(/[^\w-]+/g, '_'));
      mkdirSync(dir, { recursive: true });
      const npm = (args: string[]) => mustRun('npm', args, { cwd: dir, env: cleanEnv() });
      npm(['init', '-y', '--loglevel=warn']);
      for (const c of ex.setup.commands.filter((c) => c.startsWith('npm pkg '))) npm(c.split(/\s+/).slice(1));
      npm(['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=warn', tgz, ...ex.setup.packages]);
      for (const f of ex.files) writeFileSync(path.join(dir, f.file), f.text);

      const node = (args: string[], env: Record<string, string> = {}) => run(process.execPath, args, { cwd: dir, env: cleanEnv(env) });
      if (ex.files.some((f) => f.file === 'binding.gyp')) {
        const gyp = resolveFromRoot('node-gyp/bin/node-gyp.js');
        const nodedir = path.resolve(path.dirname(process.execPath), '..');
        const args = [gyp, 'rebuild', '-j', '2'];
        if (existsSync(path.join(nodedir, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${nodedir}`);
        const r = node(args);
        expect(r.status, r.stdout + r.stderr).toBe(0);
      }
      const tsFiles = ex.files.filter((f) => f.file.endsWith('.ts')).map((f) => f.file);
      if (tsFiles.length) {
        // Node's types only when the example installs them, as its reader would.
        const nodeTypes = existsSync(path.join(dir, 'node_modules', '@types', 'node'));
        const tsconfig = {
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'ES2022',
            lib: ['ES2022'],
            strict: true,
            skipLibCheck: false,
            types: nodeTypes ? ['node'] : [],
          },
          files: tsFiles,
        };
        writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
        const own = path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
        const r = node([existsSync(own) ? own : resolveFromRoot('typescript/bin/tsc'), '-p', 'tsconfig.json']);
        expect(r.stdout + r.stderr, 'tsc').toBe('');
      }
      expect(ex.entries.length).toBeGreaterThan(0);
      for (const entry of ex.entries) {
        if (entry.endsWith('.sh')) {
          // A shell example calls the installed commands as its reader
          // would (`npx hotspan`: no bin on PATH), stopping at the first
          // that fails; hotspan's commands report on stderr, so only the
          // exit status is checked.
          const r = run('bash', ['-e', entry], { cwd: dir, env: cleanEnv({ PREBUILDS_ONLY: '1', npm_config_yes: 'false' }) });
          expect(r.status, `${entry} exit status\n${r.stdout}\n${r.stderr}`).toBe(0);
          continue;
        }
        const r = node([entry.replace(/\.ts$/, '.js')], { PREBUILDS_ONLY: '1' });
        expect(r.stderr, `${entry} wrote to stderr`).toBe('');
        expect(r.status, `${entry} exit status`).toBe(0);
      }
    }, 300_000);
  }
});
