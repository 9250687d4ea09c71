#!/usr/bin/env bash
# The native tests (`npm run test:native`, or one part: run.sh release|tsan):
#   release  Release build of the core and its tests (native/build), ctest
#            (a stage of test:all).
#   tsan     ThreadSanitizer build (native/build-tsan), ctest; any TSan report
#            fails. Then a negative control: the stress test built under TSan
#            with the timeline lock compiled out (HOTSPAN_TEST_NO_TIMELINE_LOCK)
#            must FAIL, which shows the stress test can catch a missing lock.
#            If it passes, so does this script not. (A stage of test:all.)
# With no argument, both. The committed .wasm's checks are stages of npm test
# and test:all (scripts/test-stages.mjs).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
native="$(cd "$here/.." && pwd)"
jobs="${HOTSPAN_JOBS:-2}"  # the machine is shared: keep builds to -j2
# exitcode: a TSan report makes the test exit non-zero even if its checks pass.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:exitcode=66"

build_tree() {  # dir, cmake args...
  local dir="$1"
  shift
  cmake -S "$native" -B "$native/$dir" "$@" >/dev/null
}

part="${1:-all}"
case "$part" in
  release | tsan | all) ;;
  *)
    echo "run.sh: unknown part '$part' (release, tsan or nothing for both)" >&2
    exit 2
    ;;
esac

release() {
  echo "== native: release build and tests"
  build_tree build -DCMAKE_BUILD_TYPE=Release -DHOTSPAN_TSAN=OFF -DHOTSPAN_TEST_NO_TIMELINE_LOCK=OFF
  cmake --build "$native/build" -j "$jobs"
  # fuzz_corpus_outputs decodes with protoc: without it, skipped with a line,
  # except where tools are required (CI=true, HOTSPAN_REQUIRE_TOOLS=1).
  local skip=()
  if ! command -v protoc >/dev/null && [ "${CI:-}" != "true" ] && [ "${HOTSPAN_REQUIRE_TOOLS:-}" != "1" ]; then
    echo "native: SKIPPED fuzz_corpus_outputs (protoc not found; apt-get install protobuf-compiler)"
    skip=(-E '^fuzz_corpus_outputs$')
  fi
  (cd "$native/build" && ctest --output-on-failure -j "$jobs" ${skip[@]+"${skip[@]}"})
}

tsan() {
  echo "== native: ThreadSanitizer build and tests"
  # One tree for the core, its tests and the addon: test:sanitizers runs the
  # addon from it without compiling the core again.
  bash "$here/sanitizer-tree.sh" tsan
  (cd "$native/build-tsan/build" && ctest --output-on-failure -j "$jobs")

  echo "== native: negative control (stress test without the timeline lock, under TSan)"
  build_tree build-tsan-nolock -DCMAKE_BUILD_TYPE=Debug -DHOTSPAN_TSAN=ON -DHOTSPAN_TEST_NO_TIMELINE_LOCK=ON
  cmake --build "$native/build-tsan-nolock" -j "$jobs" --target stress_test
  log="$native/build-tsan-nolock/stress_test.log"
  detected=""
  # Races are found by happens-before analysis, not by luck of timing, but the
  # interleaving still varies run to run: one retry keeps a slow, oversubscribed
  # machine from failing the control spuriously.
  for attempt in 1 2; do
    set +e
    "$native/build-tsan-nolock/stress_test" >"$log" 2>&1
    rc=$?
    set -e
    if [ "$rc" -ne 0 ]; then
      if grep -q "WARNING: ThreadSanitizer" "$log"; then
        detected="ThreadSanitizer report (exit $rc, attempt $attempt)"
        # The race and the first core frames involved (which guarded data).
        grep -m1 "WARNING: ThreadSanitizer" "$log" | sed 's/^/    /'
        grep -m4 -E "#[0-9]+ hotspan::" "$log" | sed 's/^ */      /'
      elif grep -q "CHECK failed" "$log"; then
        detected="wrong results (exit $rc, attempt $attempt)"
        grep -m3 "CHECK failed" "$log" | sed 's/^/    /'
      else
        detected="abnormal exit $rc (attempt $attempt)"
        tail -5 "$log" | sed 's/^/    /'
      fi
      break
    fi
  done
  if [ -z "$detected" ]; then
    echo "negative control FAILED: the stress test passes with the timeline lock removed" >&2
    tail -5 "$log" >&2
    exit 1
  fi
  echo "negative control: removing the timeline lock is detected ($detected)"
}

[ "$part" = tsan ] || release
[ "$part" = release ] || tsan
echo "== native ($part): all passed"
