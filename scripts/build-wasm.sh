#!/usr/bin/env bash
# Builds native/wasm/hotspan_core.wasm (`npm run build:wasm`): the core's
# writers, stats and histogram for the js backend, compiled for wasm32-wasi
# from the same sources as the addon, with the entry points in native/wasm/.
#
#   scripts/build-wasm.sh           rebuild the committed file
#   scripts/build-wasm.sh --check   rebuild into a temporary file and fail if
#                                   the committed one differs (native/test/run.sh)
#
# Reproducible: relative paths, no debug info, names stripped, so the bytes
# depend only on the sources and the compiler (clang 16 with Debian's
# wasm32-wasi libc++ and wasi-libc: .ci/run installs them). Without clang-16
# --check skips with a message, except under CI=true where it fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=native/wasm/hotspan_core.wasm
check=0
[ "${1:-}" = "--check" ] && check=1
cxx="${HOTSPAN_WASM_CXX:-clang++-16}"
llvm=/usr/lib/llvm-16

if ! command -v "$cxx" >/dev/null || [ ! -d "$llvm/include/wasm32-wasi/c++/v1" ]; then
  msg="build-wasm: $cxx or the wasm32-wasi libc++ is missing (apt-get install clang-16 lld-16 libc++-16-dev-wasm32 libc++abi-16-dev-wasm32 libclang-rt-16-dev-wasm32 wasi-libc)"
  if [ "$check" = 1 ] && [ "${CI:-}" != "true" ]; then
    echo "$msg: SKIPPED the check that $out matches its sources"
    exit 0
  fi
  echo "$msg" >&2
  exit 1
fi

# The Node-free core sources the entry points reach: writers (their DocumentWriter
# interface also takes frozen records), stats, histogram, query engine, span ids,
# the OTLP encoder (the js backend's export, lib/otlp-worker.ts).
sources=(
  native/wasm/bulk_memory.cc
  native/wasm/exports.cc
  native/wasm/snapshot_columns.cc
  native/core/chrome_json_writer.cc
  native/core/perfetto_writer.cc
  native/core/attr_members.cc
  native/core/json_text.cc
  native/core/stats.cc
  native/core/snapshot_query.cc
  native/core/query_call.cc
  native/core/log_linear_histogram.cc
  native/core/huge_pages.cc
  native/core/frozen_records.cc
  native/core/tick_anchors.cc
  native/core/span_ids.cc
  native/core/otlp_batcher.cc
  native/core/otlp_request.cc
  native/core/otlp_request_json.cc
  native/core/otlp_otel_fields.cc
)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$cxx" --target=wasm32-wasi --sysroot=/usr \
  -isystem "$llvm/include/wasm32-wasi/c++/v1" -isystem /usr/include/wasm32-wasi \
  -std=c++17 -O2 -mbulk-memory -fno-exceptions -fno-rtti -DNDEBUG -Wall -Wextra \
  -ffile-prefix-map="$PWD"=. -Inative/core -Inative/include -include native/wasm/from_chars_double.h \
  -mexec-model=reactor -fuse-ld=lld -L"$llvm/lib/wasm32-wasi" -L/usr/lib/wasm32-wasi \
  -Wl,--gc-sections -Wl,--strip-all \
  "${sources[@]}" -o "$tmp/hotspan_core.wasm"

if [ "$check" = 1 ]; then
  if ! cmp -s "$tmp/hotspan_core.wasm" "$out"; then
    echo "build-wasm: $out does not match its sources; run npm run build:wasm and commit it" >&2
    exit 1
  fi
  echo "build-wasm: $out matches its sources"
else
  mv "$tmp/hotspan_core.wasm" "$out"
  echo "build-wasm: wrote $out ($(wc -c <"$out") bytes)"
fi
