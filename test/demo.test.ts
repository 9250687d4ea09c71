// `npm run demo` traces only its own work: the consumer addon it loads for
// the native-thread part is built (when stale, as on first use: seconds of
// node-gyp) before anything records, so no span begins before its setup is
// done. The demo also reports its largest gap between spans (a warning past
// 1 s); that figure depends on the machine, so this test asserts the
// ordering, which does not.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-demo-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the demo', () => {
  it('builds its consumer addon before it starts tracing', () => {
    // The consumer addon is the one the global setup built: making it stale
    // here would have the demo's node-gyp rebuild delete it while other test
    // files load it. The order checked below is the same either way.
    const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'demo.js')], { cwd: tmp, encoding: 'utf8', timeout: 600_000 });
    expect(r.stdout, r.stderr).toContain('native threads encoder');
    const m = /setup done at ([\d.]+) ms, first span at ([\d.]+) ms, largest gap between spans ([\d.]+) ms/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    const [setup, first] = [Number(m![1]), Number(m![2])];
    expect(first, 'no span before the setup (the addon build) is done').toBeGreaterThanOrEqual(setup);
    expect(existsSync(path.join(tmp, 'trace.json'))).toBe(true);
    expect(existsSync(path.join(tmp, 'trace.pftrace'))).toBe(true);
  }, 600_000);
});
