// The README's fenced code blocks, and the rules that make each one runnable.
//
// A block's info string is its language, then (for anything but a shell block)
// the file it is: ```js worker.js, ```json binding.gyp. Blocks under one
// heading are the files of one example, written side by side into one folder
// of a project that has the packed hotspan installed. Each script no other file
// of the example names (./worker.js is named by main.js) is an entry and is run:
// .js as CommonJS, .mjs as an ES module, .ts as an ES module compiled by tsc
// (strict), .sh with bash. A binding.gyp is built with node-gyp first. Shell
// blocks without a file name hold the quick-start commands, which are checked
// against package.json and .ci/run.
import { readFileSync } from 'node:fs';

export interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The file this block is, from the info string; '' for quick-start shell blocks. */
  file: string;
  heading: string;
  text: string;
}

export interface Example {
  heading: string;
  files: Block[];
  /** Scripts no other file of the example names: run in this order. */
  entries: string[];
}

const SCRIPT = /\.(c?js|mjs|ts|sh)$/;
export const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console']);

export function readBlocks(readmePath: string): Block[] {
  const lines = readFileSync(readmePath, 'utf8').split('\n');
  const blocks: Block[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const h = /^#{1,6}\s+(.*)$/.exec(lines[i]!);
    if (h) {
      heading = h[1]!.trim();
      continue;
    }
    const open = /^```(\S*)\s*(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    if (i >= lines.length) throw new Error(`README.md:${start + 1}: code block is not closed`);
    blocks.push({ line: start + 1, lang: open[1]!, file: open[2]!, heading, text: body.join('\n') + '\n' });
  }
  return blocks;
}

/** Groups the blocks other than the quick start by heading; throws naming any block that says no file name. */
export function examples(blocks: Block[]): Example[] {
  const byHeading = new Map<string, Block[]>();
  for (const b of blocks) {
    if (SHELL_LANGS.has(b.lang) && b.file === '') continue;
    if (b.file === '') {
      throw new Error(
        `README.md:${b.line}: a \`\`\`${b.lang} block needs a file name after its language ` +
          '(e.g. ```js example.js) so the README test can run it',
      );
    }
    const list = byHeading.get(b.heading) ?? [];
    list.push(b);
    byHeading.set(b.heading, list);
  }
  return [...byHeading].map(([heading, files]) => {
    const named = (f: Block) => files.some((o) => o !== f && o.text.includes(`./${f.file}`));
    const entries = files.filter((f) => SCRIPT.test(f.file) && !named(f)).map((f) => f.file);
    return { heading, files, entries };
  });
}

/** Every command of a shell block (comments and blank lines dropped). */
export function shellCommands(block: Block): string[] {
  return block.text
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter((l) => l !== '');
}
