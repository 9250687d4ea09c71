// Core snapshot / stats -> the JS shapes of lib/native-binding.ts
// (NativeSnapshot, NativeStatsRow[]).
#pragma once

#include <napi.h>

#include <cstdint>
#include <vector>

#include "tracer.h"

namespace hotspan_addon {

// Columnar: times in ms on the performance.now() axis given by origin_ns.
// Reads the records in place (Tracer::freeze): no intermediate copy.
Napi::Object SnapshotToJs(Napi::Env env, const hotspan::FrozenSnapshot& snapshot, int64_t origin_ns);

Napi::Array StatsToJs(Napi::Env env, const std::vector<hotspan::StatsRow>& rows,
                      const hotspan::Tracer& tracer);

}  // namespace hotspan_addon
