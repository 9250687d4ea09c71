// Attributes passed as values, not JSON: the facade names an attribute
// shape (its keys, in order) once, then passes each span's values as
// arguments; they are stored as typed slots (native/core/attr_slots.h),
// with no JSON and no object walk on this side. Up to kMaxSlots values.
#pragma once

#include <node_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace hotspan_addon {

// A binding's shapes: id -> keys as UTF-8 (lone surrogates as U+FFFD); and
// its interned string values: id -> UTF-8, so a repeated value crosses as a
// number instead of being read from its JS string again.
struct SlotShapes {
  static constexpr size_t kMaxSlots = 4;
  static constexpr size_t kMaxShapes = 4096;  // past it, new shapes take the JSON path
  static constexpr size_t kMaxValues = 4096;  // past it, values cross as strings
  std::vector<std::vector<std::string>> keys;
  std::vector<std::string> values;
};

namespace slots {

// What the per-span calls answer when a value is not a finite number, a
// string or a boolean: nothing was recorded, the facade takes the JSON path
// (whose checks name the bad value).
constexpr int kRefused = -1;

napi_value DefineShape(napi_env env, napi_callback_info info);  // (keys[]) -> id | -1
napi_value DefineValue(napi_env env, napi_callback_info info);  // (string) -> id | -1
// (nameId, shape, interned, v0 .. v3) -> undefined (begun) | status | kRefused. Bit i of
// `interned`: v<i> is the id of an interned string value (DefineValue).
napi_value BeginSlots(napi_env env, napi_callback_info info);
// (track, nameId, shape, interned, v0 .. v3) -> token (0: closed or unknown) | kRefused
napi_value AsyncBeginSlots(napi_env env, napi_callback_info info);

}  // namespace slots
}  // namespace hotspan_addon
