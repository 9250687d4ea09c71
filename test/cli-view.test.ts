// `hotspan view` in a real browser: headless Chromium opens the generated
// file offline with a fresh profile; the page makes no request, logs no error,
// and reports the rows and spans it drew, which match the trace; search,
// tooltip and zoom work; 1M spans load and draw; a screenshot is taken.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CHROMIUM, openOffline } from './support/browser';
import { cli, knownTrace, writeGeneratedPerfetto } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-view-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface ViewStats {
  rows: number;
  spans: number;
  spansShown: number;
  rectsDrawn: number;
  drawMs: number;
  frames: number;
  matches?: number;
}

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`cli-view.test.ts: skipped, no Chromium at ${CHROMIUM}`);

describe.runIf(process.env.CI === 'true')('Chromium for the view tests', () => {
  it(`is at ${CHROMIUM}`, () => {
    expect(haveChromium).toBe(true);
  });
});

describe.runIf(haveChromium)('hotspan view', () => {
  let known: { json: string; pftrace: string };
  beforeAll(async () => {
    known = await knownTrace(tmp);
  });

  for (const format of ['pftrace', 'json'] as const) {
    it(`draws the rows and spans of a known trace, offline and without errors (${format})`, async () => {
      const html = path.join(tmp, `known-${format}.html`);
      const r = cli(['view', known[format], '-o', html]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('7 spans on 3 rows');
      const text = readFileSync(html, 'utf8');
      expect(text).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
      const o = await openOffline(html);
      try {
        const page = o.page;
        const stats = (): Promise<ViewStats> => page.evaluate(() => (globalThis as unknown as { hotspanView: ViewStats }).hotspanView);
        const s = await stats();
        // main (req, req, db x3) and two lanes of track: net (fetch2 overlaps fetch; not its child).
        expect(s.rows).toBe(3);
        expect(s.spans).toBe(7);
        expect(s.spansShown).toBe(7);
        expect(s.rectsDrawn).toBe(7);

        // Search: the three db spans match.
        await page.fill('#search', 'db');
        expect((await stats()).matches).toBe(3);
        expect(await page.textContent('#matches')).toBe('3 matching spans');
        await page.fill('#search', '');

        // Tooltip over the second req (20..32 ms of 32): row 0, depth 0, at 80% of the plot.
        const box = await page.locator('#tl').boundingBox();
        if (box === null) throw new Error('no canvas');
        const plotX = (f: number): number => box.x + 170 + f * (box.width - 170);
        await page.mouse.move(plotX(26 / 32), box.y + 4 + 9);
        const tip = await page.textContent('#tip');
        expect(tip).toContain('req');
        expect(tip).toContain('duration 12.000 ms');
        expect(tip).toContain('route: "/a"');

        // Zoom in around 2 ms: fewer spans in view, more frames drawn.
        const before = await stats();
        for (let k = 0; k < 5; k++) await page.mouse.wheel(0, -400);
        await page.waitForFunction((n) => (globalThis as unknown as { hotspanView: ViewStats }).hotspanView.frames > n, before.frames);
        const zoomed = await stats();
        expect(zoomed.spansShown).toBeLessThan(7);
        expect(zoomed.spansShown).toBeGreaterThan(0);

        await page.screenshot({ path: path.join(tmp, `known-${format}.png`) });
        expect(readFileSync(path.join(tmp, `known-${format}.png`)).subarray(1, 4).toString()).toBe('PNG');
        expect(o.errors).toEqual([]);
        expect(o.requests).toEqual([]);
      } finally {
        await o.close();
      }
    }, 180_000);
  }

  it('loads and draws 1M spans', async () => {
    // 4 threads x 250k spans: 125k roots with one child each.
    const file = path.join(tmp, 'million.pftrace');
    writeGeneratedPerfetto(file, {
      names: ['child', 'root'],
      threads: [0, 1, 2, 3].map((t) => `worker ${String(t)}`),
      trees: 125000,
      originNs: 0n,
      clocks: { monotonicNs: 0n, realtimeNs: 1_800_000_000_000_000_000n },
      records: (t, i) => {
        const at = i * 1000 + t * 100;
        return [
          { name: 0, start: at + 10, end: at + 400, local: 2 * i + 2, parent: 2 * i + 1, depth: 1 },
          { name: 1, start: at, end: at + 900, local: 2 * i + 1, parent: 0, depth: 0 },
        ];
      },
    });
    const html = path.join(tmp, 'million.html');
    const r = cli(['view', file, '-o', html]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('1000000 spans on 4 rows');
    const o = await openOffline(html);
    try {
      const s = await o.page.evaluate(() => (globalThis as unknown as { hotspanView: ViewStats }).hotspanView);
      expect(s.rows).toBe(4);
      expect(s.spans).toBe(1_000_000);
      expect(s.spansShown).toBe(1_000_000);
      // Sub-pixel spans merge: at most one rectangle per pixel column per lane.
      expect(s.rectsDrawn).toBeLessThan(4 * 2 * 1280);
      console.log(`1M spans: first draw ${s.drawMs.toFixed(1)} ms, ${String(s.rectsDrawn)} rectangles`);
      expect(o.errors).toEqual([]);
      expect(o.requests).toEqual([]);
    } finally {
      await o.close();
    }
  }, 300_000);
});
