// Core snapshot / stats -> the JS shapes of lib/native-binding.ts
// (NativeSnapshot, NativeStatsRow[]).
#pragma once

#include <napi.h>

#include <cstdint>
#include <vector>

#include "tracer.h"

namespace hotspan_addon {

// Columnar: times in ms on the performance.now() axis given by origin_ns.
Napi::Object SnapshotToJs(Napi::Env env, const hotspan::Snapshot& snapshot, int64_t origin_ns);

Napi::Array StatsToJs(Napi::Env env, const std::vector<hotspan::StatsRow>& rows,
                      const hotspan::Tracer& tracer);

}  // namespace hotspan_addon
