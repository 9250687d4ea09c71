#!/usr/bin/env bash
# `npm run test:fuzz`: builds the libFuzzer targets (clang, ASan + UBSan,
# native/build-fuzz) and runs each for HOTSPAN_FUZZ_SECONDS (default 25),
# HOTSPAN_JOBS (default 2) at a time,
# from the seed corpus in native/fuzz/corpus/<target>. New inputs go to a
# scratch copy, not to the repository. A finding fails the run and leaves
# its input in native/build-fuzz/findings/<target>/: fix the bug, then add
# that file to native/fuzz/regressions/<target>/, where <target>_replay (a
# ctest test in every build) replays it from then on.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
native="$(cd "$here/.." && pwd)"
jobs="${HOTSPAN_JOBS:-2}"
seconds="${HOTSPAN_FUZZ_SECONDS:-25}"
build="$native/build-fuzz"
targets=(attrs_fuzz names_fuzz writers_fuzz c_api_fuzz)

export CC="${HOTSPAN_FUZZ_CC:-clang}" CXX="${HOTSPAN_FUZZ_CXX:-clang++}"
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cc"
if ! "$CXX" -fsanitize=fuzzer,address "$probe/p.cc" -o "$probe/p" 2>"$probe/err"; then
  echo "fuzz: $CXX cannot link libFuzzer (on Debian: apt-get install clang libclang-rt-dev):" >&2
  cat "$probe/err" >&2
  exit 1
fi

cmake -S "$native" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DHOTSPAN_FUZZ=ON >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

rm -rf "$build/findings" "$build/scratch"
# Runs one target for $seconds; its output goes to its log. Returns non-zero
# on a finding.
fuzz_one() {  # target
  local t="$1"
  mkdir -p "$build/findings/$t" "$build/scratch/$t"
  # The regression inputs join the seeds: libFuzzer runs every input of its
  # corpus directories first, so an old finding fails at once (under clang's
  # UBSan too, which checks some things g++'s does not).
  local dirs=("$build/scratch/$t" "$here/corpus/$t")
  [ -d "$here/regressions/$t" ] && dirs+=("$here/regressions/$t")
  # Reports go to stderr (the log); ASan halts on the first error, UBSan too.
  ASAN_OPTIONS="abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$build/fuzz/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/findings/$t/" "${dirs[@]}" \
    >"$build/$t.log" 2>&1
}

# $jobs targets at a time (each fuzzer is one process on one core), then each
# target's result in order.
pids=()
for i in "${!targets[@]}"; do
  t="${targets[$i]}"
  echo "== fuzz: $t for ${seconds}s"
  fuzz_one "$t" &
  pids[$i]=$!
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
done
failed=0
for i in "${!targets[@]}"; do
  t="${targets[$i]}"
  if ! wait "${pids[$i]}"; then
    echo "fuzz: $t found a problem; input(s) in $build/findings/$t/:" >&2
    ls "$build/findings/$t" >&2
    grep -m20 -E "ERROR|SUMMARY|runtime error|does not decode|c_api_fuzz:|names_fuzz:|Test unit written" "$build/$t.log" >&2 || tail -30 "$build/$t.log" >&2
    failed=1
    continue
  fi
  echo "  $t:"
  grep -E "stat::number_of_executed_units|cov:" "$build/$t.log" | tail -2 | sed 's/^/    /'
done
[ "$failed" -eq 0 ] || exit 1
echo "== fuzz: no finding"
