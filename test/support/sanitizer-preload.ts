// Sanitizer runs (native/test/sanitizers.sh) name the sanitizer runtime in
// HOTSPAN_TEST_PRELOAD. An uninstrumented node needs it preloaded before an
// instrumented addon loads, so it becomes LD_PRELOAD of the test processes
// forked after this global setup (and of their children), but not of vitest's
// own process, whose bundler's native threads are not ours to check, nor of
// the builds that the earlier global setups ran.
export default function setup(): () => void {
  const preload = process.env.HOTSPAN_TEST_PRELOAD;
  if (preload) process.env.LD_PRELOAD = preload;
  return () => {
    if (preload) delete process.env.LD_PRELOAD;
  };
}
