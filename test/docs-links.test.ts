// scripts/check-links.mjs (run by `npm run docs:check`): every relative link
// and anchor of README.md, docs/*.md and ARCHITECTURE.md resolves, and the
// checker finds each kind of broken link, naming the file and line.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');
interface Links {
  checkLinks(files: string[], base?: string): string[];
  documentationFiles(base?: string): string[];
  slugs(headings: string[]): string[];
}
const load = async () => (await import(pathToFileURL(path.join(root, 'scripts', 'check-links.mjs')).href)) as Links;

const scratch = mkdtempSync(path.join(os.tmpdir(), 'hotspan-links-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('documentation links', () => {
  it('every link and anchor of README.md, docs/*.md and ARCHITECTURE.md resolves', async () => {
    const { checkLinks, documentationFiles } = await load();
    const files = documentationFiles();
    expect(files.map((f) => path.relative(root, f))).toEqual(expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'docs/api.md', 'docs/glossary.md']));
    expect(checkLinks(files)).toEqual([]);
  });

  it("anchors are GitHub's: punctuation dropped, code kept, repeats numbered", async () => {
    const { slugs } = await load();
    expect(slugs(['The OpenTelemetry API on hotspan (hotspan/otel)', 'Targets (reported, not asserted)', 'Spans', 'Spans', 'Zero-code tracing'])).toEqual([
      'the-opentelemetry-api-on-hotspan-hotspanotel',
      'targets-reported-not-asserted',
      'spans',
      'spans-1',
      'zero-code-tracing',
    ]);
  });

  it('finds a missing file, a missing anchor, here and in a GitHub address of this repository, and ignores code and other sites', async () => {
    const { checkLinks } = await load();
    const dir = path.join(scratch, 'repo');
    mkdirSync(path.join(dir, 'docs'), { recursive: true });
    writeFileSync(path.join(dir, 'docs', 'a.md'), '# A page\n\n## Second `part`\n');
    const page = [
      '# Top',
      '',
      '[ok](docs/a.md#second-part) [ok2](#top) [web](https://example.com/x.md) `[code](nope.md)`',
      '',
      '[gone](docs/b.md)',
      '[bad anchor](docs/a.md#third)',
      '[own ok](https://github.com/hotspan/hotspan/blob/main/docs/a.md#a-page)',
      '[own gone](https://github.com/hotspan/hotspan/blob/main/docs/c.md)',
      '![img](https://raw.githubusercontent.com/hotspan/hotspan/main/docs/missing.png)',
      '[self](#nowhere)',
      '',
      '```md',
      '[in a block](nope.md)',
      '```',
    ].join('\n');
    writeFileSync(path.join(dir, 'README.md'), page);
    expect(checkLinks([path.join(dir, 'README.md')], dir)).toEqual([
      'README.md:5: docs/b.md: no such file docs/b.md',
      'README.md:6: docs/a.md#third: no heading with anchor #third in docs/a.md',
      'README.md:8: https://github.com/hotspan/hotspan/blob/main/docs/c.md: no such file docs/c.md',
      'README.md:9: https://raw.githubusercontent.com/hotspan/hotspan/main/docs/missing.png: no such file docs/missing.png',
      'README.md:10: #nowhere: no heading with anchor #nowhere in README.md',
    ]);
  });
});
