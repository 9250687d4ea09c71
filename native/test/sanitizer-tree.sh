#!/usr/bin/env bash
# One sanitizer tree for the core, its tests and the addon, built by cmake-js
# (it configures the addon target) in native/build-<asan|tsan>/build. run.sh
# tsan and sanitizers.sh both build through here, so each tree's options are
# one list: the second build of the TSan tree finds it up to date.
#   sanitizer-tree.sh asan|tsan
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
native="$(cd "$here/.." && pwd)"
root="$(cd "$native/.." && pwd)"
jobs="${HOTSPAN_JOBS:-2}"  # the machine is shared: keep builds to -j2

case "${1:-}" in
  asan) defs=(--CDHOTSPAN_ASAN=ON) ;;
  tsan) defs=(--CDHOTSPAN_TSAN=ON --CDHOTSPAN_TEST_NO_TIMELINE_LOCK=OFF) ;;
  *)
    echo "sanitizer-tree.sh: asan or tsan, got '${1:-}'" >&2
    exit 2
    ;;
esac
cd "$root"
npx cmake-js build --directory native --out "$native/build-$1/build" --parallel "$jobs" --log-level warn "${defs[@]}"
