// The fenced code blocks of README.md and docs/*.md, and the rules that make
// each one runnable (test/doc-blocks.test.ts runs them).
//
// A block's info string is its language, then (for anything but a shell block)
// the file it is: ```js worker.js, ```json binding.gyp. Blocks under one
// heading are the files of one example, written side by side into a fresh
// project (`npm init -y`) with the packed hotspan installed. Each script no
// other file of the example names (./worker.js is named by main.js) is an
// entry and is run: .js as the project's type says (CommonJS unless the
// example sets "type": "module"), .mjs as an ES module, .ts compiled by tsc
// (strict, module nodenext, so it is an ES module exactly when the project
// is), .sh with bash. A binding.gyp is built with node-gyp first.
//
// An example that needs more than hotspan says so in its text, on a line of
// its own under the same heading (before or after the blocks):
//
//   Setup: `npm pkg set type=module` `npm install -D typescript @types/node`
//
// Each backticked command on a `Setup:` line is one of
//   npm pkg set type=module           the project is an ES module project
//   npm install [-D] <package>...     these packages are installed beside hotspan
// and nothing else; the test runs them as written (the installs in one npm
// call with the tarball). A .ts example gets Node's types only when it
// installs @types/node, and compiles with the typescript it installs, or the
// repository's when it names none.
//
// Shell blocks without a file name hold the quick-start commands; only the
// README may have them, and they are checked against package.json and .ci/run.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

export interface Setup {
  /** The `Setup:` commands as written, in order. */
  commands: string[];
  /** 'module' when a command sets "type": "module". */
  type: 'module' | 'commonjs';
  /** Packages the example installs beside hotspan, as written (name or name@range). */
  packages: string[];
}

export interface Block {
  /** The markdown file, as given to readBlocks. */
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The file this block is, from the info string; '' for quick-start shell blocks. */
  file: string;
  heading: string;
  /** Which heading of the document the block is under (0 before the first). */
  section: number;
  text: string;
}

export interface Example {
  doc: string;
  heading: string;
  files: Block[];
  /** Scripts no other file of the example names: run in this order. */
  entries: string[];
  setup: Setup;
}

const SCRIPT = /\.(c?js|mjs|ts|sh)$/;
export const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console']);

const SETUP_LINE = /^Setup:\s*(.*)$/;
const SET_MODULE = /^npm pkg set type=module$/;
const INSTALL = /^npm install(?:\s+(?:-D|--save-dev))?((?:\s+[@\w./~^<>=-]+)+)$/;

/** The commands of one `Setup:` line; throws naming the line for anything it does not know. */
export function parseSetupLine(rest: string, where: string): string[] {
  const commands = [...rest.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.trim());
  const leftover = rest.replace(/`[^`]*`/g, '').trim();
  if (commands.length === 0 || leftover !== '') {
    throw new Error(`${where}: a Setup: line lists npm commands, each in backticks, and nothing else; got "${rest}"`);
  }
  for (const c of commands) {
    if (!SET_MODULE.test(c) && !INSTALL.test(c)) {
      throw new Error(`${where}: unknown Setup command \`${c}\` (use \`npm pkg set type=module\` or \`npm install [-D] <package>...\`)`);
    }
  }
  return commands;
}

export function setupOf(commands: string[]): Setup {
  const packages: string[] = [];
  let type: Setup['type'] = 'commonjs';
  for (const c of commands) {
    if (SET_MODULE.test(c)) type = 'module';
    const m = INSTALL.exec(c);
    if (m) packages.push(...m[1]!.trim().split(/\s+/));
  }
  return { commands, type, packages };
}

/** The blocks of one markdown file; `Setup:` lines are checked here and kept per section. */
export function readBlocks(docPath: string, setups?: Map<number, string[]>): Block[] {
  const doc = path.basename(path.dirname(docPath)) === 'docs' ? `docs/${path.basename(docPath)}` : path.basename(docPath);
  const lines = readFileSync(docPath, 'utf8').split('\n');
  const blocks: Block[] = [];
  let heading = '';
  let section = 0;
  for (let i = 0; i < lines.length; i++) {
    const h = /^#{1,6}\s+(.*)$/.exec(lines[i]!);
    if (h) {
      heading = h[1]!.trim();
      section++;
      continue;
    }
    const s = SETUP_LINE.exec(lines[i]!);
    if (s) {
      const commands = parseSetupLine(s[1]!, `${doc}:${i + 1}`);
      setups?.set(section, [...(setups.get(section) ?? []), ...commands]);
      continue;
    }
    const open = /^```(\S*)\s*(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    if (i >= lines.length) throw new Error(`${doc}:${start + 1}: code block is not closed`);
    blocks.push({ doc, line: start + 1, lang: open[1]!, file: open[2]!, heading, section, text: body.join('\n') + '\n' });
  }
  return blocks;
}

/**
 * Groups the blocks other than the quick start by heading; throws naming any
 * block that says no file name (a shell block without one is a quick-start
 * block, allowed only where `quickStart` is true).
 */
export function examples(blocks: Block[], setups = new Map<number, string[]>(), quickStart = false): Example[] {
  const bySection = new Map<number, Block[]>();
  for (const b of blocks) {
    if (quickStart && SHELL_LANGS.has(b.lang) && b.file === '') continue;
    if (b.file === '') {
      throw new Error(
        `${b.doc}:${b.line}: a \`\`\`${b.lang} block needs a file name after its language ` +
          '(e.g. ```js example.js) so the documentation test can run it',
      );
    }
    const list = bySection.get(b.section) ?? [];
    list.push(b);
    bySection.set(b.section, list);
  }
  return [...bySection].map(([section, files]) => {
    const named = (f: Block) => files.some((o) => o !== f && o.text.includes(`./${f.file}`));
    const entries = files.filter((f) => SCRIPT.test(f.file) && !named(f)).map((f) => f.file);
    return { doc: files[0]!.doc, heading: files[0]!.heading, files, entries, setup: setupOf(setups.get(section) ?? []) };
  });
}

/** Every command of a shell block (comments and blank lines dropped). */
export function shellCommands(block: Block): string[] {
  return block.text
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter((l) => l !== '');
}
