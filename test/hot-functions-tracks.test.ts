// `hotspan run`'s processes on one time axis, with the spans hotspan/auto
// records itself (http server, fetch): a real express server
// (test/fixtures/profile/busy-server.js) is asked, one request at a time, by
// a client process of its own; each server span begins inside the client's
// fetch of it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { readTrace } from '../lib/cli/read-trace';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { cliPath, repoRoot } from './support/trace-files';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-hot-tracks-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SERVER = path.join(repoRoot, 'test', 'fixtures', 'profile', 'busy-server.js');

/** Per span name, its spans' [start, end] (ns). */
function spansByName(file: string): Map<string, Array<[number, number]>> {
  const out = new Map<string, Array<[number, number]>>();
  readTrace(file, {
    timeline: () => undefined,
    span: (s) => {
      const list = out.get(s.name) ?? [];
      out.set(s.name, list);
      list.push([s.startNs, s.endNs]);
    },
  });
  return out;
}

describe.skipIf(skipNative)('hotspan run\'s automatic spans across processes', () => {
  it("a child's automatic spans are on the run's time axis: each server span begins inside the client's fetch of it", () => {
    const out = path.join(tmp, 'axis.json');
    const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '--no-report', '--', process.execPath, SERVER], {
      encoding: 'utf8',
      cwd: repoRoot,
      timeout: 120_000,
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    const spans = spansByName(out);
    const fetches = (spans.get('GET') ?? []).sort((a, b) => a[0] - b[0]);
    const served = [...(spans.get('GET /busy') ?? []), ...(spans.get('GET /light') ?? [])].sort((a, b) => a[0] - b[0]);
    expect(fetches).toHaveLength(10);
    expect(served).toHaveLength(10);
    // The server span begins once the request arrived, after the fetch began, and before its answer ended the fetch.
    served.forEach(([start], i) => {
      expect(start, `server span ${String(i)} after its fetch began`).toBeGreaterThanOrEqual(fetches[i][0]);
      expect(start, `server span ${String(i)} before its fetch ended`).toBeLessThanOrEqual(fetches[i][1]);
    });
  });
});

