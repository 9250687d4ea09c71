// Checks that every link and image of the documentation resolves: relative
// paths to files of the checkout, and #anchors to headings of the target (or
// of the same file). Links to this repository's own files on GitHub (the
// README's absolute links, which a registry page needs) are checked as the
// local files they name. Other web links are not fetched.
//
//   node scripts/check-links.mjs [file.md ...]   (default: README.md, docs/*.md, ARCHITECTURE.md)
//
// Markdown is parsed with markdown-it (the parser TypeDoc uses too), so a link
// inside a code span or block is not a link, as on GitHub.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import MarkdownIt from 'markdown-it';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const md = new MarkdownIt({ html: true });

/** Addresses of this repository's files on the web, and where they are here. */
const OWN = [
  /^https:\/\/github\.com\/hotspan\/hotspan\/(?:blob|tree)\/main\/([^#?]*)(#.*)?$/,
  /^https:\/\/raw\.githubusercontent\.com\/hotspan\/hotspan\/main\/([^#?]*)(#.*)?$/,
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function slugs(headings) {
  const seen = new Map();
  return headings.map((text) => {
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return n === 0 ? base : `${base}-${n}`;
  });
}

/** The links (with their line) and the heading anchors of one markdown text. */
export function parse(text) {
  const tokens = md.parse(text, {});
  const lines = text.split('\n');
  // markdown-it gives a paragraph's lines: the link's is the first naming it.
  // (A table cell has no lines of its own: the first line of the file naming it.)
  const lineOf = (map, href) => {
    const [from, to] = map ?? [0, lines.length];
    for (let l = from; l < to; l++) if (lines[l].includes(href)) return l + 1;
    return from + 1;
  };
  const links = [];
  const headings = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.type === 'heading_open') {
      const inline = tokens[i + 1];
      headings.push((inline.children ?? []).filter((c) => c.type === 'text' || c.type === 'code_inline').map((c) => c.content).join(''));
    }
    if (t.type !== 'inline') continue;
    for (const c of t.children ?? []) {
      const href = c.type === 'link_open' ? c.attrGet('href') : c.type === 'image' ? c.attrGet('src') : null;
      if (href !== null) links.push({ href, line: lineOf(t.map, href) });
    }
  }
  return { links, anchors: new Set(slugs(headings)) };
}

/** Problems of the given markdown files, each `file:line: what`; [] when every link resolves. */
export function checkLinks(files, base = root) {
  const problems = [];
  const anchorsOf = new Map();
  const anchors = (file) => {
    if (!anchorsOf.has(file)) anchorsOf.set(file, parse(readFileSync(file, 'utf8')).anchors);
    return anchorsOf.get(file);
  };
  for (const file of files) {
    const rel = path.relative(base, file);
    const { links } = parse(readFileSync(file, 'utf8'));
    for (const { href, line } of links) {
      const where = `${rel}:${line}`;
      if (!href) {
        problems.push(`${where}: empty link`);
        continue;
      }
      let target;
      let anchor;
      const own = OWN.map((re) => re.exec(href)).find(Boolean);
      if (own) {
        target = path.join(base, decodeURIComponent(own[1]));
        anchor = own[2]?.slice(1);
      } else if (/^[a-z][a-z0-9+.-]*:/i.test(href)) {
        continue; // another site, mailto:, ...: not fetched
      } else {
        const [p, a] = href.split('#', 2);
        target = p === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(p));
        anchor = a;
      }
      if (!existsSync(target)) {
        problems.push(`${where}: ${href}: no such file ${path.relative(base, target)}`);
        continue;
      }
      if (anchor !== undefined && anchor !== '') {
        if (!target.endsWith('.md') || statSync(target).isDirectory()) {
          problems.push(`${where}: ${href}: an anchor into a file that is not markdown`);
        } else if (!anchors(target).has(decodeURIComponent(anchor))) {
          problems.push(`${where}: ${href}: no heading with anchor #${anchor} in ${path.relative(base, target)}`);
        }
      }
    }
  }
  return problems;
}

/** README.md, docs/*.md and ARCHITECTURE.md of the checkout. */
export function documentationFiles(base = root) {
  const docs = readdirSync(path.join(base, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => path.join(base, 'docs', f));
  return [path.join(base, 'README.md'), ...docs, path.join(base, 'ARCHITECTURE.md')];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const files = args.length ? args.map((f) => path.resolve(f)) : documentationFiles();
  const problems = checkLinks(files);
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(`check-links: ${problems.length} broken link${problems.length === 1 ? '' : 's'} in ${files.length} files`);
    process.exitCode = 1;
  } else {
    console.error(`check-links: every link of ${files.length} files resolves`);
  }
}
