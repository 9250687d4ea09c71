// test/support/tools.ts: a case that needs a missing tool (protoc, Chromium)
// is skipped with a line in npm test, and fails with the reason where tools
// are required (test:all, CI=true). Runs test/fixtures/tools-probe in its own
// vitest with the tools pointed at paths that do not exist.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');
const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
const config = path.join(root, 'test', 'fixtures', 'tools-probe', 'vitest.config.mts');

interface Outcome {
  status: number | null;
  output: string;
  /** Each case's title and status (passed, failed, skipped). */
  cases: Record<string, string>;
  failures: string;
}

function probe(env: Record<string, string>): Outcome {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['CI', 'HOTSPAN_REQUIRE_TOOLS', 'HOTSPAN_PROTOC', 'HOTSPAN_CHROMIUM']) delete base[k];
  const r = spawnSync(process.execPath, [vitest, 'run', '--config', config, '--reporter=json', '--reporter=default'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...base, ...env },
  });
  const json = r.stdout.slice(r.stdout.indexOf('{"'), r.stdout.lastIndexOf('}') + 1);
  const report = JSON.parse(json) as { testResults: Array<{ assertionResults: Array<{ title: string; status: string; failureMessages: string[] }> }> };
  const cases: Record<string, string> = {};
  let failures = '';
  for (const f of report.testResults) {
    for (const a of f.assertionResults) {
      cases[a.title] = a.status;
      failures += a.failureMessages.join('\n');
    }
  }
  return { status: r.status, output: r.stdout + r.stderr, cases, failures };
}

const missing = { HOTSPAN_PROTOC: '/nonexistent/protoc', HOTSPAN_CHROMIUM: '/nonexistent/chromium' };

describe('a missing protoc or Chromium', () => {
  it('in npm test: the cases are skipped, one line each says which tool and why', () => {
    const r = probe(missing);
    expect(r.cases).toEqual({ 'runs protoc': 'skipped', 'opens Chromium': 'skipped' });
    expect(r.output).toContain('SKIPPED the cases that need protoc: protoc not found at /nonexistent/protoc');
    expect(r.output).toContain('SKIPPED the cases that need chromium: chromium not found at /nonexistent/chromium');
    expect(r.output.split('SKIPPED the cases that need protoc').length - 1).toBe(1);
    expect(r.status).toBe(0);
  });

  for (const env of [{ HOTSPAN_REQUIRE_TOOLS: '1' }, { CI: 'true' }] as Array<Record<string, string>>) {
    it(`with ${Object.keys(env)[0]}: the cases run and fail, naming the tool`, () => {
      const r = probe({ ...missing, ...env });
      expect(r.cases).toEqual({ 'runs protoc': 'failed', 'opens Chromium': 'failed' });
      expect(r.failures).toContain('protoc not found at /nonexistent/protoc (apt-get install protobuf-compiler, or set HOTSPAN_PROTOC)');
      expect(r.failures).toContain('chromium not found at /nonexistent/chromium');
      expect(r.failures).toContain('tools are required under npm run test:all and CI=true');
      expect(r.status).toBe(1);
    });
  }

  it('a tool that is there (any executable, here node) is what the cases get, and they run', () => {
    const r = probe({ HOTSPAN_PROTOC: process.execPath, HOTSPAN_CHROMIUM: process.execPath, HOTSPAN_REQUIRE_TOOLS: '1' });
    expect(r.failures).toBe('');
    expect(r.cases).toEqual({ 'runs protoc': 'passed', 'opens Chromium': 'passed' });
    expect(r.output).not.toContain('SKIPPED');
  });
});
