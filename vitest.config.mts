import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

// Which files run (HOTSPAN_TESTS, set by scripts/test-stages.mjs and
// native/test/sanitizers.sh): `quick` for `npm test`, every file but SLOW;
// `slow` for what test:all adds after it (.ci/run); `node-matrix`, `addon`
// and `arm64` below; `all` (the default, so a plain `vitest run` runs everything).
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
// Files by what they drive, for the two sets below. CALLS: the addon's
// calls and argument forms. THREADS: worker_threads, the C ABI's native
// threads, GC finalizers. EXITS: process exit and signals.
const t = (names: string[]): string[] => names.map((n) => `test/${n}.test.ts`);
const CALLS = t(['conformance', 'binding', 'binding-surface', 'surface', 'attr-slots', 'async-path']);
const THREADS = t(['js-workers', 'native-threads', 'exactness', 'gc']);
const EXITS = t(['exit-drain', 'write-on-exit', 'dump-triggers']);

// NODE_MATRIX (`node-matrix`, what test:all runs again on Node 22 and 24): the
// files whose behaviour can change with Node's version. The addon's loading
// and its Node-API calls, worker_threads and the C ABI's native threads, GC
// finalizers, process exit and signals, the module hooks and http internals
// hotspan/auto patches, perf_hooks, AsyncLocalStorage, the OpenTelemetry API
// and the two module systems. The other files test formats, parsers, the CLI
// and docs over stable Node APIs: Node 20 runs them.
const NODE_MATRIX = [
  ...CALLS,
  ...THREADS,
  ...EXITS,
  ...t(['fallback', 'auto', 'auto-counts', 'event-loop-delay', 'trace-context', 'otel', 'otlp', 'entries']),
  // The database instruments: TracingChannels, the require hook, AsyncLocalStorage across awaits.
  ...t(['auto-pg', 'auto-mysql', 'auto-redis']),
  // The web framework instruments: TracingChannels of express's router and fastify, http server internals.
  ...t(['auto-routes']),
];
// ADDON (`addon`, the set the sanitizer runs use on an instrumented addon):
// the files that drive the addon's own C++ (native/addon and the core behind
// it): its calls and argument checks, threads and workers, the budget,
// reads, queries, writes, streams and dumps, exit paths, trace context and
// OTLP export. The files left out test JavaScript over the addon (the CLI's
// readers and the WebAssembly writers, hotspan/auto's instruments, the
// OpenTelemetry provider, module entries, env parsing), pack their own
// build, or open Chromium; the core's C++ runs under the sanitizers in its own
// tests.
const ADDON = [
  ...CALLS,
  ...THREADS,
  ...EXITS,
  ...t(['bad-inputs', 'budget', 'counters', 'dump', 'exit-paths', 'stream', 'faults', 'query-engine', 'bounded-read']),
  ...t(['perfetto', 'consumers', 'trace-context', 'trace-context-join', 'otlp', 'otlp-joined', 'otlp-otel', 'otlp-hostile']),
];
// ARM64 (`arm64`, the arm64 stage: Node's arm64 binary under qemu-user on the
// linux-arm64 prebuild, PREBUILDS_ONLY=1): emulation runs the suites several
// times slower (these six: 632 s against 55 s on x64 on a busy machine, 141 s
// emulated on an idle one), so the files that
// exercise what differs on another CPU:
// the addon's calls and argument forms (binding), spans through the facade
// (conformance), worker_threads and the C ABI's native threads (js-workers,
// native-threads), the memory budget (budget), and the written outputs
// decoded by their consumers (consumers: DevTools' trace engine, speedscope,
// protoc and protobufjs).
const ARM64 = t(['binding', 'conformance', 'js-workers', 'native-threads', 'budget', 'consumers']);
const SETS = ['quick', 'slow', 'all', 'node-matrix', 'addon', 'arm64'];
const files = process.env.HOTSPAN_TESTS ?? 'all';
if (!SETS.includes(files)) {
  throw new Error(`HOTSPAN_TESTS must be one of ${SETS.join(', ')}, got ${JSON.stringify(files)}`);
}
const include =
  files === 'slow'
    ? SLOW
    : files === 'node-matrix'
      ? NODE_MATRIX
      : files === 'addon'
        ? ADDON
        : files === 'arm64'
          ? ARM64
          : ['test/**/*.test.ts'];
const skip = files === 'quick' ? SLOW : [];

export default defineConfig({
  test: {
    // The threads pool crashes with native addons; forks isolates each file.
    pool: 'forks',
    // One fork per core. vitest's default leaves a core idle (cores - 1), so on
    // a 2-core machine every file ran alone while its child processes and
    // waits left the other core unused. No test depends on load (the rule for
    // every suite), and every file works in its own temporary directory.
    maxWorkers: availableParallelism(),
    include,
    exclude: [...configDefaults.exclude, ...skip],
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
