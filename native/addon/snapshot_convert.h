// Core snapshot / stats -> the JS shapes of lib/binding/native-binding.ts
// (NativeSnapshot, NativeStatsRow[]).
#pragma once

#include <napi.h>

#include <cstdint>
#include <vector>

#include "frozen_view.h"
#include "record/tracer.h"

namespace hotspan_addon {

// Columnar: times in ms on the performance.now() axis of the view's origin.
// Records [offset, offset + count) of the view (global indices, see
// snapshot_query.h), read in place: no intermediate copy.
Napi::Object RecordsToJs(Napi::Env env, FrozenView& view, uint64_t offset, uint64_t count);
// The records at these global indices (each < the view's size), in this order.
Napi::Object RecordsToJs(Napi::Env env, FrozenView& view, const std::vector<uint64_t>& indices);
// The view's counter series (NativeSnapshot.counters), sample times in ms as above.
Napi::Array CountersToJs(Napi::Env env, const FrozenView& view);

Napi::Array StatsToJs(Napi::Env env, const std::vector<hotspan::StatsRow>& rows,
                      const hotspan::Tracer& tracer);

}  // namespace hotspan_addon
