import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The threads pool crashes with native addons; forks isolates each file.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // Compiles dist/ once for the tests that run the CommonJS build (children, workers, package).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
