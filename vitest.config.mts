import { defineConfig } from 'vitest/config';

// Sanitizer runs (native/test/sanitizers.sh) name the runtime to preload in
// HOTSPAN_TEST_PRELOAD: it goes to the test processes forked from here (and
// their children), not to vitest's own process, whose bundler has native
// threads that are not ours to check.
if (process.env.HOTSPAN_TEST_PRELOAD) process.env.LD_PRELOAD = process.env.HOTSPAN_TEST_PRELOAD;

export default defineConfig({
  test: {
    // The threads pool crashes with native addons; forks isolates each file.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // Compiles dist/ once for the tests that run the CommonJS build (children, workers, package).
    // Then builds the hotspan.h consumer addon once (test/fixtures/build-consumer.js exports
    // `setup`), so the files that load it do not race node-gyp in the same directory.
    globalSetup: ['test/global-setup.ts', 'test/fixtures/build-consumer.js'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
