#!/usr/bin/env bash
# Builds native/wasm/hotspan_core.wasm (`npm run build:wasm`): the core's
# writers, stats and histogram for the js backend, compiled for wasm32-wasi
# from the same sources as the addon, with the entry points in native/wasm/.
# Beside it, hotspan_core.wasm.digest records what built it (the compiler's
# version, the flags, the hash of every file the build read and of the .wasm;
# scripts/wasm-digest.mjs), which `npm test` checks without a compiler.
#
#   scripts/build-wasm.sh           rebuild the committed file and its digest
#   scripts/build-wasm.sh --check   rebuild into a temporary directory and fail
#                                   if the committed file or digest differs
#                                   (npm run test:all)
#
# Reproducible: relative paths, no debug info, names stripped, so the bytes
# depend only on the sources and the compiler (clang 16 with Debian's
# wasm32-wasi libc++ and wasi-libc: .ci/run installs them). Without clang-16
# --check skips with a message, except under CI=true or HOTSPAN_REQUIRE_TOOLS=1
# where it fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=native/wasm/hotspan_core.wasm
digest="$out.digest"
check=0
[ "${1:-}" = "--check" ] && check=1
cxx="${HOTSPAN_WASM_CXX:-clang++-16}"
llvm=/usr/lib/llvm-16

if ! command -v "$cxx" >/dev/null || [ ! -d "$llvm/include/wasm32-wasi/c++/v1" ]; then
  msg="build-wasm: $cxx or the wasm32-wasi libc++ is missing (apt-get install clang-16 lld-16 libc++-16-dev-wasm32 libc++abi-16-dev-wasm32 libclang-rt-16-dev-wasm32 wasi-libc)"
  if [ "$check" = 1 ] && [ "${CI:-}" != "true" ] && [ "${HOTSPAN_REQUIRE_TOOLS:-}" != "1" ]; then
    echo "$msg: SKIPPED the byte-for-byte check of $out (npm test still checks its digest)"
    exit 0
  fi
  echo "$msg" >&2
  exit 1
fi

# The Node-free core sources the entry points reach: writers (their DocumentWriter
# interface also takes frozen records), stats, histogram, query engine, the OTLP
# encoder (the js backend's export, lib/otlp/otlp-worker.ts), the export read
# that feeds it on the wasm engine (export/export_cursor.cc over
# read/record_cursor.cc), and the recording core (record/, one thread: platform_lock.h) but for the C ABI, which is for
# other addons' threads.
sources=(
  native/wasm/bulk_memory.cc
  native/wasm/thread_exit.cc
  native/wasm/sbrk.cc
  native/wasm/exports.cc
  native/wasm/record_exports.cc
  native/wasm/snapshot_columns.cc
  native/core/write/chrome_json_writer.cc
  native/core/write/perfetto_writer.cc
  native/core/read/attr_members.cc
  native/core/read/stats.cc
  native/core/read/snapshot_query.cc
  native/core/read/query_call.cc
  native/core/read/log_linear_histogram.cc
  native/core/read/record_cursor.cc
  native/core/read/handover_batch.cc
  native/core/record/async_track.cc
  native/core/record/attr_area.cc
  native/core/record/attr_dict.cc
  native/core/record/attr_slots.cc
  native/core/record/chunk_pool.cc
  native/core/record/chunk_reserve.cc
  native/core/record/clock.cc
  native/core/record/clock_readings.cc
  native/core/record/close_barrier.cc
  native/core/record/counter_store.cc
  native/core/record/cpu_profile_store.cc
  native/core/record/frozen_records.cc
  native/core/record/group_track.cc
  native/core/record/holder_check.cc
  native/core/record/huge_pages.cc
  native/core/record/imported_thread.cc
  native/core/record/json_text.cc
  native/core/record/name_table.cc
  native/core/record/native_thread_cache.cc
  native/core/record/pending_queue.cc
  native/core/record/registry.cc
  native/core/record/span_ids.cc
  native/core/record/thread_state.cc
  native/core/record/tick_anchors.cc
  native/core/record/timeline.cc
  native/core/record/trace_id.cc
  native/core/record/tracer.cc
  native/core/record/wake_signal.cc
  native/core/export/export_cursor.cc
  native/core/export/otlp_batcher.cc
  native/core/read/trace_keep.cc
  native/core/export/otlp_request.cc
  native/core/export/otlp_request_json.cc
  native/core/export/otlp_otel_fields.cc
)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# One flag a line: the digest records them as they are passed.
compile_flags=(
  --target=wasm32-wasi --sysroot=/usr
  -isystem "$llvm/include/wasm32-wasi/c++/v1" -isystem /usr/include/wasm32-wasi
  -std=c++17 -O2 -mbulk-memory -fno-exceptions -fno-rtti -DNDEBUG -Wall -Wextra
  -ffile-prefix-map="$PWD"=. -Inative/core -Inative/include -include native/wasm/from_chars_double.h
)
# The memory is shared (a SharedArrayBuffer) so that a worker can touch its
# fresh pages ahead of the recorder (lib/binding/wasm-prefault.ts): the module
# itself still runs on one thread only. Debian's wasi-libc and libc++ are
# built without atomics, so wasm-ld refuses shared memory by its feature
# check ("--shared-memory is disallowed by dlmalloc.o because it was not
# compiled with 'atomics' or 'bulk-memory' features"); --no-check-features
# skips that check, which is sound here because no wasm code ever runs on a
# second thread. A shared memory needs a maximum: wasm32's 4 GiB.
link_flags=(
  -mexec-model=reactor -fuse-ld=lld -L"$llvm/lib/wasm32-wasi" -L/usr/lib/wasm32-wasi
  -Wl,--gc-sections -Wl,--strip-all
  -Wl,--shared-memory -Wl,--max-memory=4294967296 -Wl,--no-check-features
)
"$cxx" "${compile_flags[@]}" "${link_flags[@]}" "${sources[@]}" -o "$tmp/hotspan_core.wasm"

# Every project file each source reads (-MM leaves out the system headers,
# which the compiler's version stands for), then the digest.
for src in "${sources[@]}"; do
  "$cxx" "${compile_flags[@]}" -MM "$src"
done >"$tmp/deps"
for f in "${compile_flags[@]}" "${link_flags[@]}"; do
  printf '%s\n' "${f//"$PWD"/<root>}"  # no machine's path in the digest
done >"$tmp/flags"
node scripts/wasm-digest.mjs write "$tmp/hotspan_core.wasm.digest" "$("$cxx" --version | head -1)" \
  "$tmp/flags" "$tmp/deps" "$tmp/hotspan_core.wasm"

if [ "$check" = 1 ]; then
  if ! cmp -s "$tmp/hotspan_core.wasm" "$out"; then
    echo "build-wasm: $out does not match its sources; run npm run build:wasm and commit it and $digest" >&2
    exit 1
  fi
  if ! cmp -s "$tmp/hotspan_core.wasm.digest" "$digest"; then
    echo "build-wasm: $digest is not what this build records; run npm run build:wasm and commit it" >&2
    diff "$digest" "$tmp/hotspan_core.wasm.digest" >&2 || true
    exit 1
  fi
  echo "build-wasm: $out and $digest match their sources, byte for byte"
else
  mv "$tmp/hotspan_core.wasm" "$out"
  mv "$tmp/hotspan_core.wasm.digest" "$digest"
  echo "build-wasm: wrote $out ($(wc -c <"$out") bytes) and $digest"
fi
