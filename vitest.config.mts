import { configDefaults, defineConfig } from 'vitest/config';

// Which files run (HOTSPAN_TESTS, set by scripts/test-stages.mjs): `quick` for
// `npm test`, every file but SLOW; `slow` for what test:all adds after it
// (.ci/run); `all` (the default, so a plain `vitest run` runs everything).
// SLOW: the files that need the npm registry and a full addon rebuild
// (package-tarball; doc-blocks, an npm install per example), Chromium
// (cli-view, cli-view-shape), or take longest: a child process or
// a big trace per case, protoc run per cut (together 57% of the suites' time
// in one profiled run, `vitest run --reporter=verbose`).
const SLOW = [
  'test/package-tarball.test.ts',
  'test/doc-blocks.test.ts',
  'test/cli-view.test.ts',
  'test/cli-view-shape.test.ts',
  'test/faults.test.ts',
  'test/cli-convert.test.ts',
  'test/stream.test.ts',
  'test/exit-paths.test.ts',
];
const files = process.env.HOTSPAN_TESTS ?? 'all';
if (!['quick', 'slow', 'all'].includes(files)) {
  throw new Error(`HOTSPAN_TESTS must be quick, slow or all, got ${JSON.stringify(files)}`);
}

export default defineConfig({
  test: {
    // The threads pool crashes with native addons; forks isolates each file.
    pool: 'forks',
    include: files === 'slow' ? SLOW : ['test/**/*.test.ts'],
    exclude: files === 'quick' ? [...configDefaults.exclude, ...SLOW] : configDefaults.exclude,
    // Compiles dist/ once for the tests that run the CommonJS build (children, workers, package).
    // Then builds the hotspan.h consumer addon once (test/fixtures/build-consumer.js exports
    // `setup`), so the files that load it do not race node-gyp in the same directory.
    // Last: sanitizer runs preload their runtime into the test processes
    // only (test/support/sanitizer-preload.ts), not into the builds above.
    globalSetup: ['test/global-setup.ts', 'test/fixtures/build-consumer.js', 'test/support/sanitizer-preload.ts'],
    // Sanitizer runs: the addon variant they chose is the one every test loads.
    setupFiles: ['test/support/addon-variant.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
