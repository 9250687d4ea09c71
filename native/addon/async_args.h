// The numbers of the per-span async calls, passed through memory instead of
// as Node-API arguments: reading a number argument costs ~50 instructions
// (napi_get_value_*), a span's begin and end read four. The facade writes
// them into a Float64Array over `in` (asyncView) and calls asyncBegin() or
// asyncEnd() with no argument; asyncBegin() leaves its answer, the local id,
// in kLocal. kLocal and kToken also carry the tags of span_calls.h (which
// form a call is). Env thread only, like the calls: the numbers are written
// right before the call that reads them, the answer read right after.
#pragma once

#include <array>
#include <cstddef>
#include <memory>

namespace hotspan_addon {

struct AsyncArgs {
  enum Index : size_t { kTrack, kName, kToken, kFlags, kLocal, kCount };
  // Shared with the ArrayBuffer over it, which may outlive the binding.
  std::shared_ptr<std::array<double, kCount>> in = std::make_shared<std::array<double, kCount>>();
};

}  // namespace hotspan_addon
