// Renders docs/view.png: records a small trace (nested spans on the main
// thread, concurrent async I/O, a serial track, groups, a counter), writes it with
// `hotspan view`, and screenshots the page in headless Chromium
// (/usr/bin/chromium, or HOTSPAN_CHROMIUM). Run after `npm run build:ts`:
//   node scripts/view-screenshot.mjs
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { Tracer } = require(path.join(root, 'dist', 'index.js'));
const { chromium } = require('playwright-core');

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-shot-'));
const trace = path.join(tmp, 'demo.pftrace');
const html = path.join(tmp, 'demo.html');
const spin = (ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const tracer = new Tracer();
const disk = tracer.track('disk', { serial: true });
for (let step = 0; step < 3; step++) {
  await tracer.group('request', async () => {
    tracer.counter('queue depth', 4 - step);
    tracer.trace('parse', () => spin(2), { bytes: 4096 * (step + 1) });
    const io = [3, 6, 4].map((ms, k) =>
      tracer.traceAsync(`db.query ${String(k)}`, sleep(ms), { track: 'db', attrs: { table: ['users', 'orders', 'items'][k] } }),
    );
    tracer.trace('render', () => {
      tracer.trace('template', () => spin(1.5));
      tracer.trace('serialize', () => {
        tracer.trace('json', () => spin(1));
        spin(0.5);
      });
    });
    await Promise.all([...io, tracer.traceAsync('write log', sleep(2), { track: disk })]);
    tracer.counter('queue depth', 3 - step);
  });
}
await tracer.settle();
await tracer.write(trace);
tracer.close();

execFileSync(process.execPath, [path.join(root, 'dist', 'cli', 'main.js'), 'view', trace, '-o', html], { stdio: 'inherit' });
const profile = path.join(tmp, 'profile');
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.HOTSPAN_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  offline: true,
  viewport: { width: 1200, height: 520 },
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = context.pages()[0] ?? (await context.newPage());
await page.goto(pathToFileURL(html).href);
await page.waitForFunction(() => globalThis.hotspanView?.ready === true);
mkdirSync(path.join(root, 'docs'), { recursive: true });
const out = path.join(root, 'docs', 'view.png');
await page.screenshot({ path: out });
await context.close();
rmSync(tmp, { recursive: true, force: true });
console.log(`wrote ${out}`);
