// Attributes passed as values, not JSON: the facade names an attribute
// shape (its keys, in order) once, then passes each span's values; they are
// stored as typed slots (native/core/record/attr_slots.h), with no JSON and no
// object walk on this side. Up to kMaxSlots values.
//
// A value crosses one of three ways, picked per slot by the facade and told
// in the call's `code`: a number or an interned string's id written into the
// binding's slot view (a Float64Array over SlotShapes::in, read here with no
// Node-API call), a boolean in the code itself, or the value as an argument
// (any other string; anything this side must check and may refuse).
#pragma once

#include <node_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "record/attr_slots.h"

namespace hotspan_addon {

struct TracerBinding;

// A binding's shapes: id -> keys; and its interned string values. Both are
// kept in slot encoding (u32 length, then UTF-8 with lone surrogates as
// U+FFFD), so a slot is written by copying them: keys and repeated values
// are encoded once, not per span. Each also has its id in the tracer's
// dictionary (hotspan::AttrDict, kNone when it was full): a span of a shape
// with one stores the compact form, which names the keys and the interned
// values by those ids (attr_slots.h).
struct SlotShapes {
  static constexpr size_t kMaxSlots = hotspan::attr_slots::kMaxSlots;
  static constexpr size_t kMaxShapes = 4096;  // past it, new shapes take the JSON path
  static constexpr size_t kMaxValues = 4096;  // past it, values cross as strings
  // The slot view: the values, then the name id and the code of a
  // BeginView call (so the common call reads no argument).
  static constexpr size_t kNameAt = kMaxSlots;
  static constexpr size_t kCodeAt = kMaxSlots + 1;
  static constexpr size_t kViewSize = kMaxSlots + 2;
  // Per slot of a shape, what precedes its value: the kind's byte (set per
  // span), then the key (u32 length, bytes); one copy per slot.
  struct Shape {
    uint32_t slots = 0;
    uint32_t dict_id = 0;  // AttrDict::kNone: the full form
    std::array<std::string, kMaxSlots> heads;
  };
  std::vector<Shape> shapes;
  std::vector<std::string> values;
  std::vector<uint32_t> value_dict_ids;  // per value; AttrDict::kNone: stored as text
  std::shared_ptr<std::array<double, kViewSize>> in = std::make_shared<std::array<double, kViewSize>>();
};

namespace slots {

// What the per-span calls answer when a value is not a finite number, a
// string or a boolean: nothing was recorded, the facade takes the JSON path
// (whose checks name the bad value).
constexpr int kRefused = -1;

// The per-slot kinds of a call's `code` = shape << kShapeShift | kind of
// slot i << (kKindBits * i).
enum SlotKind : uint32_t {
  kViewNumber = 0,  // in[i] is the value
  kViewValue = 1,   // in[i] is an interned value's id (DefineValue)
  kFalse = 2,
  kTrue = 3,
  kArgument = 4,  // the value is argument v<i>
};
constexpr uint32_t kKindBits = 3;
constexpr uint32_t kShapeShift = kKindBits * SlotShapes::kMaxSlots;

napi_value DefineShape(napi_env env, napi_callback_info info);  // (keys[]) -> id | -1
napi_value DefineValue(napi_env env, napi_callback_info info);  // (string) -> id | -1
// () -> the Float64Array over SlotShapes::in, or undefined where external
// buffers are refused (then every value crosses as an argument, with
// BeginSlots).
napi_value SlotView(napi_env env, napi_callback_info info);
// (nameId, code, v0 .. v3) -> undefined (begun) | status | kRefused.
napi_value BeginSlots(napi_env env, napi_callback_info info);
// As BeginSlots, with the name id, the code and every value in the view (no
// slot kArgument): begin()'s view form (span_calls.h), no argument to read.
napi_value BeginViewOf(napi_env env, TracerBinding& b);
// (track, nameId, code, v0 .. v3) -> token (0: closed or unknown) | kRefused
napi_value AsyncBeginSlots(napi_env env, napi_callback_info info);
// Undefined: as AsyncBeginSlots with the track and name id in the async view
// (async_args.h), the code and every value in the slot view (no slot
// kArgument); the answer (local id, 0 or kRefused) in the async view's
// kLocal. asyncBegin()'s values form (span_calls.h): the request span's
// begin, with no argument to read.
napi_value AsyncBeginValuesOf(napi_env env, TracerBinding& b);

}  // namespace slots
}  // namespace hotspan_addon
