import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The threads pool crashes with native addons; forks isolates each file.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
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
