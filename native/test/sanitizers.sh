#!/usr/bin/env bash
# `npm run test:sanitizers`: the core and the addon under sanitizers.
#   1. One tree under ASan + UBSan (native/build-asan/build, by cmake-js: the
#      core, its tests, fuzz-corpus replays and the addon); ctest.
#   2. The vitest files that drive the addon's C++ on that addon
#      (HOTSPAN_TESTS=addon, listed in vitest.config.mts).
#   3. The ThreadSanitizer tree (native/build-tsan/build, the one run.sh tsan
#      builds and tests), then the worker, native-thread and exactness
#      suites on its addon.
# The instrumented addon runs the suites 2-3x slower, and two files run at
# once: the vitest runs take the arm64 stage's time limits per test.
# node itself is not instrumented: the runtime is preloaded into the test
# processes (HOTSPAN_TEST_PRELOAD, see test/support/sanitizer-preload.ts) and
# the addon variant chosen with HOTSPAN_PREBUILD (node-gyp-build's override;
# test/support/addon-variant.ts checks it is the one loaded). Every report is
# written to a log file (a report in a child process or a worker need not
# fail its test), and any log file fails this script.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
native="$(cd "$here/.." && pwd)"
root="$(cd "$native/.." && pwd)"
jobs="${HOTSPAN_JOBS:-2}"  # the machine is shared: keep builds to -j2
logs="$native/build-sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"

# Fails when a sanitizer wrote a report, printing the first ones.
check_logs() {  # what
  local found
  found="$(find "$logs" -type f | sort)"
  if [ -n "$found" ]; then
    echo "sanitizer reports during $1:" >&2
    for f in $found; do
      echo "--- $f" >&2
      head -40 "$f" >&2
    done
    exit 1
  fi
}

# ASan: halt at the first error. Leak detection is off in node: node and V8 do
# not free their heaps at exit, so LSan would report them; the core's leaks
# are checked by the ASan ctest run, where LSan is on.
asan_ubsan_env() {
  export ASAN_OPTIONS="detect_leaks=${1}:abort_on_error=1:log_path=$logs/asan"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
}

echo "== sanitizers: core tests under AddressSanitizer + UBSan"
# One tree for the core, its tests and the addon, so the core compiles once.
bash "$here/sanitizer-tree.sh" asan
(asan_ubsan_env 1 && cd "$native/build-asan/build" && ctest --output-on-failure -j "$jobs")
check_logs "the core tests (ASan + UBSan)"

echo "== sanitizers: addon under AddressSanitizer + UBSan, the vitest files that drive it"
(
  asan_ubsan_env 0
  export HOTSPAN_PREBUILD="$native/build-asan"
  export HOTSPAN_TEST_PRELOAD="$(g++ -print-file-name=libasan.so)"
  export HOTSPAN_TESTS=addon
  cd "$root" && npx vitest run --testTimeout=300000 --hookTimeout=600000
)
check_logs "vitest on the ASan + UBSan addon"

echo "== sanitizers: addon under ThreadSanitizer, worker and native-thread suites"
# The tree run.sh tsan built (up to date then), or built now.
bash "$here/sanitizer-tree.sh" tsan
(
  export TSAN_OPTIONS="suppressions=$here/tsan-node.supp:second_deadlock_stack=1:log_path=$logs/tsan"
  export HOTSPAN_PREBUILD="$native/build-tsan"
  export HOTSPAN_TEST_PRELOAD="$(g++ -print-file-name=libtsan.so)"
  cd "$root" && npx vitest run --testTimeout=300000 --hookTimeout=600000 test/js-workers.test.ts test/native-threads.test.ts test/exactness.test.ts
)
check_logs "the worker and native-thread suites on the TSan addon"
echo "== sanitizers: all passed, no report"
