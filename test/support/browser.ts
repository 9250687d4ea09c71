// Opens a local HTML file in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core, which never downloads a browser), offline, with
// a fresh profile; records console errors, page errors and every request.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

import { chromium, type BrowserContext, type Page } from 'playwright-core';

import { toolBin, toolPath } from './tools';

/** Where the view tests look for Chromium (HOTSPAN_CHROMIUM, else /usr/bin/chromium; see tools.ts). */
export const CHROMIUM = toolPath('chromium');

export interface Opened {
  page: Page;
  errors: string[];
  /** URLs of requests other than the page itself. */
  requests: string[];
  close(): Promise<void>;
}

function browserEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== 'LD_PRELOAD' && !/^(ASAN|UBSAN|TSAN)_OPTIONS$/.test(k)) env[k] = v;
  }
  return env;
}

export async function openOffline(file: string, viewport = { width: 1280, height: 720 }): Promise<Opened> {
  const profile = mkdtempSync(path.join(tmpdir(), 'hotspan-chromium-'));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: toolBin('chromium'),
    // Not the sanitizer runtime a sanitizer run preloads into the test
    // processes (native/test/sanitizers.sh): the browser is not what it checks.
    env: browserEnv(),
    headless: true,
    offline: true,
    viewport,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  const requests: string[] = [];
  const url = pathToFileURL(file).href;
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') errors.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => {
    if (r.url() !== url) requests.push(r.url());
  });
  await page.goto(url, { waitUntil: 'load', timeout: 120_000 });
  await page.waitForFunction(() => (globalThis as unknown as { hotspanView?: { ready: boolean } }).hotspanView?.ready === true, undefined, { timeout: 120_000 });
  return {
    page,
    errors,
    requests,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
