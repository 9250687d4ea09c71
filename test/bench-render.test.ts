// The bench's README sections and targets for streaming, the memory budget,
// OTLP export and hotspan.hpp (bench/render.mjs, bench/lib/targets.mjs), rendered from
// real results: the full run at e4e55ce (stream and budget measured, one
// budget run, no otlp), an older full run without any of them, and a quick
// run of `--only=stream,rss,otlp` (test/fixtures/bench-quick-stream-rss-otlp.json,
// the budget over several runs), and one of `--only=hpp`
// (test/fixtures/bench-quick-hpp.json). No bench runs here.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');
const FULL = path.join(root, 'bench', 'results', '2026-12-02-e4e55ce52820.json');
const OLDER = path.join(root, 'bench', 'results', '2026-11-30-1fec80a9e6a8.json');
const QUICK = path.join(__dirname, 'fixtures', 'bench-quick-stream-rss-otlp.json');

// The bench is plain ESM JavaScript; these are the parts the test calls.
type Summary = { median: number; min: number; max: number; runs: number[] };
type Results = Record<string, any>;
interface Target {
  id: string;
  status: string;
  value: number;
  limit: number;
  noisy: boolean;
  range: [number, number] | null;
}
interface Render {
  renderMarkdown(r: Results, file: string, chart?: string): string;
}
interface Targets {
  evaluateTargets(r: Results): Target[];
}
interface Stats {
  fmt(x: number): string;
  median(xs: number[]): number;
}
const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(path.join(root, rel)).href)) as T;
const read = (file: string): Results => JSON.parse(readFileSync(file, 'utf8'));

const SECTIONS = ['### Streaming to disk', '### Memory budget', '### OTLP export'];
const NEW_TARGETS = ['stream-writer', 'stream-js', 'budget-rss', 'budget-counts', 'otlp-throughput', 'otlp-js'];

/** The markdown section that starts at `heading`, up to the next heading. */
function section(md: string, heading: string): string {
  const i = md.indexOf(heading);
  expect(i, `no "${heading}" section`).toBeGreaterThanOrEqual(0);
  const j = md.indexOf('\n### ', i + heading.length);
  return md.slice(i, j < 0 ? undefined : j);
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'hotspan-bench-render-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('bench render: streaming, memory budget, OTLP export', () => {
  it('renders the stream and one-run budget sections of the e4e55ce full run, and no OTLP section (not run then)', async () => {
    const { renderMarkdown } = await load<Render>('bench/render.mjs');
    const { fmt } = await load<Stats>('bench/lib/stats.mjs');
    const r = read(FULL);
    expect(r.otlp).toBeUndefined();
    expect(r.rssBudget.runs).toBeUndefined();  // the one-run form
    const md = renderMarkdown(r, FULL);
    const st = section(md, '### Streaming to disk');
    expect(st).toContain(`| ${fmt(r.stream.spansPerSec.median / 1e6)} M spans/s | ${fmt(r.stream.spansPerSec.min / 1e6)} – ${fmt(r.stream.spansPerSec.max / 1e6)} |`);
    expect(st).toContain(`(the target's figure) | ${fmt(r.stream.pairRatio.median)}x |`);
    expect(st).toContain(`| ${r.stream.missed.join(', ')} |`);
    const b = section(md, '### Memory budget');
    const rb = r.rssBudget;
    expect(b).toContain(`| ${fmt(rb.rssGrowthMiB)} MiB |`);
    expect(b).toContain(`| ${fmt(rb.boundMiB)} MiB | met in 1 of 1 run |`);
    expect(b).toContain(`| ${rb.produced} / ${rb.kept} / ${rb.overwritten} / ${rb.dropped} |`);
    expect(b).toContain('kept + overwritten + dropped | yes | 1 of 1 run |');
    expect(md).not.toContain('### OTLP export');
  });

  it('renders an older full run that has none of the three keys, without those sections', async () => {
    const { renderMarkdown } = await load<Render>('bench/render.mjs');
    const r = read(OLDER);
    for (const k of ['stream', 'rssBudget', 'otlp']) expect(r[k]).toBeUndefined();
    const md = renderMarkdown(r, OLDER);
    expect(md).toContain('### Targets');
    for (const s of SECTIONS) expect(md).not.toContain(s);
  });

  it('renders all three sections of a quick --only=stream,rss,otlp run, every figure from the JSON', async () => {
    const { renderMarkdown } = await load<Render>('bench/render.mjs');
    const { fmt, median } = await load<Stats>('bench/lib/stats.mjs');
    const r = read(QUICK);
    const md = renderMarkdown(r, QUICK);
    const b = section(md, '### Memory budget');
    const runs = r.rssBudget.runs as Results[];
    expect(runs.length).toBeGreaterThan(1);
    const growth = runs.map((x) => x.rssGrowthMiB as number);
    expect(b).toContain(`median of ${runs.length} runs`);
    expect(b).toContain(`| ${fmt(median(growth))} MiB | ${fmt(Math.min(...growth))} – ${fmt(Math.max(...growth))} |`);
    expect(b).toContain(`| ${runs[0].produced} / ${runs[0].kept} / ${runs[0].overwritten} / ${runs[0].dropped} |`);
    const ot = section(md, '### OTLP export');
    const o = r.otlp as Record<string, Summary> & { exported: { sent: number; dropped: number; rejected?: number; produced: number }[] };
    expect(ot).toContain(`| ${fmt(o.spansPerSec.median / 1e6)} M spans/s | ${fmt(o.spansPerSec.min / 1e6)} – ${fmt(o.spansPerSec.max / 1e6)} |`);
    expect(ot).toContain(`| ${fmt(o.spansPerCpuSec.median / 1e6)} M spans/s |`);
    expect(ot).toContain(`| ${fmt(o.ratio.median)}x | ${fmt(o.ratio.min)} – ${fmt(o.ratio.max)} |`);
    expect(ot).toContain(o.exported.map((e) => `${e.sent} / ${e.dropped} / ${e.rejected ?? 0} / ${e.produced}`).join('; '));
    expect(ot).toContain('| sent + dropped + rejected = produced |');
    section(md, '### Streaming to disk');
  });

  it('evaluates the six targets from the figures, n/a where a run lacks them', async () => {
    const { evaluateTargets } = await load<Targets>('bench/lib/targets.mjs');
    const byId = (r: Results) => new Map(evaluateTargets(r).map((t) => [t.id, t]));
    const q = read(QUICK);
    const tq = byId(q);
    const pass = (ok: boolean) => (ok ? 'pass' : 'MISS');
    expect(tq.get('stream-writer')).toMatchObject({ value: q.stream.spansPerSec.median / 1e6, limit: 20, status: pass(q.stream.spansPerSec.median >= 20e6) });
    expect(tq.get('stream-js')).toMatchObject({ value: q.stream.pairRatio.median, limit: 1.1, range: [q.stream.pairRatio.min, q.stream.pairRatio.max] });
    expect(tq.get('otlp-throughput')).toMatchObject({ value: q.otlp.spansPerSec.median / 1e6, limit: 2, status: pass(q.otlp.spansPerSec.median >= 2e6) });
    expect(tq.get('otlp-js')).toMatchObject({ value: q.otlp.ratio.median, limit: 1.1, status: pass(q.otlp.ratio.median <= 1.1) });
    expect(tq.get('budget-rss')).toMatchObject({ limit: 80, status: 'pass' });
    expect(tq.get('budget-counts')).toMatchObject({ value: 0, status: 'pass' });

    // The full run: the stream writer's 18.84M spans/s misses 20M, its rounds cross it.
    const tf = byId(read(FULL));
    expect(tf.get('stream-writer')).toMatchObject({ status: 'MISS', noisy: true });
    expect(tf.get('budget-rss')).toMatchObject({ status: 'pass', value: read(FULL).rssBudget.rssGrowthMiB });
    expect(tf.get('otlp-throughput')?.status).toBe('n/a');

    // A budget run whose counts are off is a miss.
    const bad = read(QUICK);
    bad.rssBudget.runs[1].countsExact = false;
    expect(byId(bad).get('budget-counts')).toMatchObject({ value: 1, status: 'MISS' });

    const to = byId(read(OLDER));
    for (const id of NEW_TARGETS) expect(to.get(id)?.status, id).toBe('n/a');
  });

  it('the traceAsync target reads the async fn net of the fn when the run has it, the sync-work pair in older runs', async () => {
    const { evaluateTargets } = await load<Targets>('bench/lib/targets.mjs');
    const { fmt } = await load<Stats>('bench/lib/stats.mjs');
    const asyncTarget = (r: Results) => evaluateTargets(r).find((t) => t.id === 'async') as Target & { note: string | null };
    const ratio = (name: string, median: number, min: number, max: number) => ({ name: `in-process: ${name}`, unit: 'x', inProcess: true, median, min, max, runs: [min, median, max] });
    // A run with the net figure: it is the target's, the sync-work pair goes into the note.
    const now = { ratios: [
      ratio('traceAsync(id, () => 0), sync work / begin(id)', 1.4, 1.3, 1.5),
      ratio('traceAsync(id, async fn) net of the fn / begin(id)', 3.2, 2.9, 3.4),
      ratio('untraced promise floor (Promise.resolve(fn()).then(f, r)) net of the fn / begin(id)', 0.6, 0.5, 0.7),
    ] };
    const t = asyncTarget(now);
    expect(t).toMatchObject({ value: 3.2, limit: 3, status: 'MISS', noisy: true, range: [2.9, 3.4] });
    expect(t.note).toContain(`traceAsync(id, () => 0) / begin(id): ${fmt(1.4)}x`);
    expect(t.note).toContain(`promise floor alone (net of the fn) is ${fmt(0.6)}x`);
    // The full run at e4e55ce has only the sync-work pair, under its old name.
    const full = read(FULL);
    const old = full.ratios.find((q: Results) => q.name === 'in-process: traceAsync(id, fn) / begin(id)');
    expect(Number.isFinite(old.median)).toBe(true);
    const tf = asyncTarget(full);
    expect(tf.value).toBe(old.median);
    expect(tf.note).toContain('an older result');
  });

  it('render.mjs --out writes only the named file and its chart, not the README or docs/performance.md, even from a full run', () => {
    const files = [path.join(root, 'README.md'), path.join(root, 'docs', 'performance.md'), path.join(root, 'bench', 'results', 'README-table.md')];
    const state = () => files.map((f) => [readFileSync(f, 'utf8'), statSync(f).mtimeMs]);
    const before = state();
    const out = path.join(scratch, 'look.md');
    execFileSync(process.execPath, [path.join(root, 'bench', 'render.mjs'), `--file=${FULL}`, `--out=${out}`], { stdio: 'pipe' });
    expect(state()).toEqual(before);
    expect(readFileSync(out, 'utf8')).toContain('### Memory budget');
    expect(readFileSync(path.join(scratch, 'look.svg'), 'utf8')).toContain('<svg');
  });
});

describe('bench render: native spans through hotspan.hpp (issue 35)', () => {
  // A quick `node bench/run.mjs --only=hpp --quick` run (test/fixtures/bench-quick-hpp.json).
  const HPP = path.join(__dirname, 'fixtures', 'bench-quick-hpp.json');

  it('renders the hpp section of an --only=hpp run, every figure from the JSON', async () => {
    const { renderMarkdown } = await load<Render>('bench/render.mjs');
    const { fmt } = await load<Stats>('bench/lib/stats.mjs');
    const r = read(HPP);
    expect(r.only).toEqual(['hpp']);
    const hp = r.hpp;
    expect(hp.processes).toBeGreaterThan(1);
    const md = section(renderMarkdown(r, HPP), '### Native spans through hotspan.hpp');
    expect(md).toContain(`median of ${hp.processes} processes`);
    for (const id of ['bare', 'cabi', 'hpp', 'bare-1t', 'bare-2t', 'hpp-1t', 'hpp-2t']) {
      const row = hp.rows[id] as Summary & { label: string };
      expect(row.runs.length, id).toBe(hp.processes);
      expect(md).toContain(`| ${row.label} | ${fmt(row.median)} | ${fmt(row.min)} – ${fmt(row.max)} |`);
    }
    expect(md).toContain(`HOTSPAN_SCOPE over the bare loop: ${fmt(hp.hppOverBare.median)}x.`);
    expect(md).toContain(`bare loop ${fmt(hp.scalingBare.median)}, HOTSPAN_SCOPE ${fmt(hp.scalingHpp.median)}, which is ${fmt(hp.scalingHppOverBare.median)}x the bare loop's`);
    const c = hp.per1MSpans['hpp-2t'];
    expect(md).toContain(`| hpp-2t | ${fmt(c.faults.median)} | ${fmt(c.waits.median)} | ${fmt(c.preempted.median)} |`);
  });

  it('evaluates the two issue-35 targets from the hpp figures, n/a in runs without them', async () => {
    const { evaluateTargets } = await load<Targets>('bench/lib/targets.mjs');
    const { renderMarkdown } = await load<Render>('bench/render.mjs');
    const r = read(HPP);
    const t = new Map(evaluateTargets(r).map((x) => [x.id, x]));
    const pass = (ok: boolean) => (ok ? 'pass' : 'MISS');
    const { hppOverBare, scalingHppOverBare } = r.hpp;
    expect(t.get('hpp-bare')).toMatchObject({ value: hppOverBare.median, limit: 1.3, status: pass(hppOverBare.median <= 1.3), range: [hppOverBare.min, hppOverBare.max] });
    expect(t.get('hpp-scaling')).toMatchObject({ value: scalingHppOverBare.median, limit: 0.9, status: pass(scalingHppOverBare.median >= 0.9), range: [scalingHppOverBare.min, scalingHppOverBare.max] });
    const tf = new Map(evaluateTargets(read(FULL)).map((x) => [x.id, x]));
    for (const id of ['hpp-bare', 'hpp-scaling']) expect(tf.get(id)?.status, id).toBe('n/a');
    expect(renderMarkdown(read(FULL), FULL)).not.toContain('### Native spans through hotspan.hpp');
  });
});

interface Docs {
  renderComparison(r: Results, file: string): string;
  renderPerformancePage(r: Results, file: string): string;
  markedSection(text: string, name: string): string | null;
  spliceMarkers(text: string, name: string, body: string, what?: string): string;
}

describe('bench render: the README comparison and docs/performance.md', () => {
  /** The results file a rendered section names as its source. */
  const sourceOf = (section: string): string => {
    const m = /bench\/results\/[\w.-]+\.json/.exec(section);
    expect(m, 'the section names its results file').not.toBeNull();
    return path.join(root, m![0]);
  };

  it('renders the comparison from the JSON: one span and the realistic request, for hotspan, naive JS, performance.mark and the SDK', async () => {
    const { renderComparison } = await load<Docs>('bench/render.mjs');
    const { fmt } = await load<Stats>('bench/lib/stats.mjs');
    const r = read(FULL);
    const md = renderComparison(r, FULL);
    const hot = r.micro['hotspan-id'].median as number;
    const row = (label: string, ns: number, us: string) => `| ${label} | ${fmt(ns)} | ${fmt(ns / hot)}x | ${us} |`;
    expect(md).toContain(row('hotspan, `begin(id)`/`end()`', hot, fmt(r.request.modes.hotspan.addedUsPerRequest.median)));
    expect(md).toContain(row('naive pure-JS span (an object per span)', r.micro.naive.median, fmt(r.request.modes.naive.addedUsPerRequest.median)));
    expect(md).toContain(row('`performance.mark()` + `measure()`', r.micro['perf-mark'].median, ''));
    expect(md).toContain(row('OpenTelemetry SDK (BatchSpanProcessor)', r.micro.otel.median, fmt(r.request.modes.otel.addedUsPerRequest.median)));
    expect(md).toContain(`commit \`${r.commit}\``);
    expect(md).toContain('bench/results/2026-12-02-e4e55ce52820.json');
  });

  it('leaves out what the run lacks: an older run without the realistic request has no request column', async () => {
    const { renderComparison } = await load<Docs>('bench/render.mjs');
    const { fmt } = await load<Stats>('bench/lib/stats.mjs');
    const r = read(OLDER);
    expect(r.request).toBeUndefined();
    const md = renderComparison(r, OLDER);
    expect(md).not.toContain('request');
    expect(md).toContain(`| OpenTelemetry SDK (BatchSpanProcessor) | ${fmt(r.micro.otel.median)} | ${fmt(r.micro.otel.median / r.micro['hotspan-id'].median)}x |\n`);
  });

  it("the README's comparison and docs/performance.md are what render.mjs makes of the results file each names", async () => {
    const { renderComparison, renderPerformancePage, markedSection } = await load<Docs>('bench/render.mjs');
    const readme = markedSection(readFileSync(path.join(root, 'README.md'), 'utf8'), 'compare');
    expect(readme, 'README.md has the compare markers').not.toBeNull();
    const cfile = sourceOf(readme!);
    expect(readme).toBe(renderComparison(read(cfile), cfile).trim());
    const perf = markedSection(readFileSync(path.join(root, 'docs', 'performance.md'), 'utf8'), 'bench');
    expect(perf, 'docs/performance.md has the bench markers').not.toBeNull();
    const pfile = sourceOf(perf!);
    expect(perf).toBe(renderPerformancePage(read(pfile), pfile).trim());
  });

  it('splices between the markers and refuses a text without them, naming it', async () => {
    const { spliceMarkers } = await load<Docs>('bench/render.mjs');
    expect(spliceMarkers('a\n<!-- x:begin -->\nold\n<!-- x:end -->\nb', 'x', 'new')).toBe('a\n<!-- x:begin -->\nnew\n<!-- x:end -->\nb');
    expect(() => spliceMarkers('no markers', 'x', 'new', 'docs/performance.md')).toThrow(/docs\/performance\.md has no <!-- x:begin -->/);
  });
});
