// Hot functions of `hotspan run`'s own spans (lib/cli/hot-functions.ts): the
// spans of hotspan/auto (http server, fetch) are on async tracks, and take
// the CPU samples of their process's sampled thread that fall inside them.
// A real express server (test/fixtures/profile/busy-server.js) runs under
// `hotspan run --cpu-profile` and is asked, one request at a time, by a client
// process of its own: its handler's busy function is the top function of its
// route's span; the cheap route's spans and the client's fetch spans (the
// other process, though they span the busy requests in time) never list it.
// Checks use which functions were sampled, not how many (a busy machine takes
// fewer). Also the rule itself on hand-made columns: overlapping track spans
// share a sample, a track of another process takes none.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { Collected } from '../lib/cli/collect';
import { hotFunctions, SampleColumns, type HotFunction } from '../lib/cli/hot-functions';
import { readTrace } from '../lib/cli/read-trace';
import { buildReport } from '../lib/cli/report';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { cliPath, repoRoot } from './support/trace-files';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-hot-tracks-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SERVER = path.join(repoRoot, 'test', 'fixtures', 'profile', 'busy-server.js');

/** Every hot function per span name (no top cut), as the report finds them. */
function allHot(file: string): Map<string, HotFunction[]> {
  const c = new Collected(0);
  readTrace(file, c);
  const tl = c.timelineOf.view();
  const hot = hotFunctions(
    c.samples,
    { count: c.count, nameOf: c.nameOf.view(), startNs: c.startNs.view(), endNs: c.endNs.view(), timelineKeyOf: (i) => c.timelines[tl[i]]?.key ?? '' },
    Number.MAX_SAFE_INTEGER,
  );
  return new Map(c.names.map((name, id) => [name, hot.get(id) ?? []]));
}

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

describe.skipIf(skipNative)('hot functions of hotspan run\'s spans (async tracks)', () => {
  for (const ext of ['json', 'pftrace']) {
    it(`.${ext}: the busy handler is its route span's top function, and only its process's spans list it`, () => {
      const out = path.join(tmp, `server.${ext}`);
      const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '--no-report', '--cpu-profile=200', '--', process.execPath, SERVER], {
        encoding: 'utf8',
        cwd: repoRoot,
        timeout: 120_000,
      });
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);

      // As `hotspan report` shows it.
      const report = buildReport(out, 50, 'total');
      const busy = report.names.find((n) => n.name === 'GET /busy');
      expect(busy?.count).toBe(5);
      const top = busy?.hotFunctions?.[0];
      expect(top?.function, JSON.stringify(busy?.hotFunctions)).toBe('busyHandler');
      expect(top?.url.endsWith('/test/fixtures/profile/busy-server.js')).toBe(true);
      expect(top?.line).toBe(11);

      const hot = allHot(out);
      const lists = (name: string, fn: string): boolean => (hot.get(name) ?? []).some((f) => f.function === fn);
      // The cheap route's spans never overlap a busy request (one request at a time).
      expect(hot.get('GET /light')?.length ?? 0).toBeGreaterThan(0);
      expect(lists('GET /light', 'busyHandler')).toBe(false);
      // The client's fetch spans (named by method alone) contain the busy requests in time,
      // but are of another process: they take its samples only.
      const fetches = spansByName(out).get('GET') ?? [];
      expect(fetches).toHaveLength(10);
      expect(hot.get('GET')?.length ?? 0).toBeGreaterThan(0);
      expect(lists('GET', 'busyHandler')).toBe(false);
      expect(lists('GET', 'lightHandler')).toBe(false);
    });
  }

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

describe('which spans a sample counts for', () => {
  const frame = (fn: string) => ({ function: fn, url: 'file:///app.js', line: 1 });
  function columns(): SampleColumns {
    const s = new SampleColumns();
    s.timeline({ key: '1:http', name: 'http server', kind: 'track', concurrent: true, pid: 1 });
    s.timeline({ key: '2:http', name: 'http server', kind: 'track', concurrent: true, pid: 2 });
    // Process 1's main thread: a sample every 1 ms from 0 to 9 ms, `a` up to 4 ms, then `b`.
    for (let t = 0; t < 10; t++) s.add('1:main', t * 1e6, frame(t < 5 ? 'a' : 'b'), 1);
    return s;
  }
  // Spans: [name, timeline key, start ms, end ms].
  function hot(spans: Array<[string, string, number, number]>): Map<string, string[]> {
    const names = [...new Set(spans.map((s) => s[0]))];
    const h = hotFunctions(
      columns(),
      {
        count: spans.length,
        nameOf: Int32Array.from(spans.map((s) => names.indexOf(s[0]))),
        startNs: Float64Array.from(spans.map((s) => s[2] * 1e6)),
        endNs: Float64Array.from(spans.map((s) => s[3] * 1e6)),
        timelineKeyOf: (i) => spans[i][1],
      },
      10,
    );
    return new Map(names.map((n, id) => [n, (h.get(id) ?? []).map((f) => `${f.function}:${String(f.samples)}`)]));
  }

  it('a track span takes its process\'s samples inside it; overlapping ones share them', () => {
    const h = hot([
      ['first', '1:http', 0, 6],
      ['second', '1:http', 3, 9],
      ['other process', '2:http', 0, 9],
      ['thread span', '1:main', 7, 8],
    ]);
    expect(h.get('first')).toEqual(['a:5', 'b:2']);
    expect(h.get('second')).toEqual(['b:5', 'a:2']);
    expect(h.get('other process')).toEqual([]);
    expect(h.get('thread span')).toEqual(['b:2']);
  });

  it('a track the trace gives no process for takes no samples', () => {
    const s = columns();
    s.timeline({ key: 'x', name: 'x', kind: 'track', concurrent: true });
    const h = hotFunctions(s, { count: 1, nameOf: Int32Array.of(0), startNs: Float64Array.of(0), endNs: Float64Array.of(9e6), timelineKeyOf: () => 'x' }, 10);
    expect(h.get(0)).toBeUndefined();
  });
});
