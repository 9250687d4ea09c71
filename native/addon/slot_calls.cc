#include "slot_calls.h"

#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>

#include "arg_check.h"
#include "attr_slots.h"
#include "clock.h"
#include "hot_path.h"
#include "thread_state.h"
#include "tracer_binding.h"

namespace hotspan_addon::slots {

namespace {

using hotspan::attr_slots::put_key;
namespace as = hotspan::attr_slots;

napi_value Int(napi_env env, int32_t v) {
  napi_value out;
  napi_create_int32(env, v, &out);
  return out;
}

// Strings up to this many UTF-8 bytes are read in one pass.
constexpr size_t kOnePass = 128;

// Appends string `v`'s UTF-8 (lone surrogates as U+FFFD) as a u32 length
// and the bytes; false (nothing appended) when `v` is not a string.
bool PutString(napi_env env, napi_value v, std::string& out) {
  const size_t at = out.size() + 4;
  // One pass into room for kOnePass bytes: a result short enough that no
  // character can have been cut off (4 bytes at most) is the whole string.
  out.resize(at + kOnePass + 1);  // + the terminator Node-API writes
  size_t len;
  if (napi_get_value_string_utf8(env, v, &out[at], kOnePass + 1, &len) != napi_ok) {
    out.resize(at - 4);
    return false;
  }
  if (len + 4 > kOnePass) {  // maybe cut: measure, then read it whole
    napi_get_value_string_utf8(env, v, nullptr, 0, &len);
    out.resize(at + len + 1);
    napi_get_value_string_utf8(env, v, &out[at], len + 1, &len);
  }
  const auto n = static_cast<uint32_t>(len);
  std::memcpy(&out[at - 4], &n, 4);
  out.resize(at + len);
  return true;
}

// argv[0] is the shape id, argv[1] the interned-value bits, argv[2..] its
// values, appended to `out` as attr_slots. false: a value of another type
// (nothing thrown), or a bad shape or value id (thrown: *threw); the caller
// cuts `out` back.
bool WriteSlots(napi_env env, TracerBinding& b, napi_value* argv, std::string& out, bool* threw) {
  uint32_t shape, interned;
  if (napi_get_value_uint32(env, argv[0], &shape) != napi_ok || shape >= b.shapes.keys.size()) {
    ThrowArgType(env, "shape", "a shape id", argv[0]);
    *threw = true;
    return false;
  }
  if (!hot::U32Arg(env, argv[1], "interned", &interned)) {
    *threw = true;
    return false;
  }
  const std::vector<std::string>& keys = b.shapes.keys[shape];
  out.push_back(as::kTag);
  for (size_t i = 0; i < keys.size(); ++i) {
    napi_value v = argv[2 + i];
    const std::string& key = keys[i];
    const auto key_len = static_cast<uint32_t>(key.size());
    // Each read refuses another type (no exception), so no typeof first.
    double d;
    bool f;
    uint32_t id;
    if (interned & (1u << i)) {
      if (napi_get_value_uint32(env, v, &id) != napi_ok || id >= b.shapes.values.size()) {
        ThrowArgType(env, "value", "an interned value id", v);
        *threw = true;
        return false;
      }
      const std::string& text = b.shapes.values[id];
      put_key(out, as::kString, key.data(), key_len);
      as::put_u32(out, static_cast<uint32_t>(text.size()));
      out.append(text);
      continue;
    }
    if (napi_get_value_double(env, v, &d) == napi_ok) {
      if (!std::isfinite(d)) return false;
      put_key(out, as::kNumber, key.data(), key_len);
      as::put_number(out, d);
      continue;
    }
    const size_t kind_at = out.size();
    put_key(out, as::kString, key.data(), key_len);
    if (PutString(env, v, out)) continue;
    out.resize(kind_at);
    if (napi_get_value_bool(env, v, &f) != napi_ok) return false;
    put_key(out, f ? as::kTrue : as::kFalse, key.data(), key_len);
  }
  return true;
}

}  // namespace

napi_value DefineShape(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  TracerBinding& b = hot::ReadArgs<1>(env, info, argv);
  uint32_t n;
  bool is_array = false;
  napi_is_array(env, argv[0], &is_array);
  if (!is_array || napi_get_array_length(env, argv[0], &n) != napi_ok || n == 0 ||
      n > SlotShapes::kMaxSlots) {
    return ThrowArgType(env, "keys", "an array of 1 to 4 strings", argv[0]);
  }
  if (b.shapes.keys.size() >= SlotShapes::kMaxShapes) return Int(env, -1);
  std::vector<std::string> keys(n);
  for (uint32_t i = 0; i < n; ++i) {
    napi_value k;
    size_t len;
    napi_get_element(env, argv[0], i, &k);
    if (napi_get_value_string_utf8(env, k, nullptr, 0, &len) != napi_ok) {
      return ThrowArgType(env, "keys", "an array of 1 to 4 strings", argv[0]);
    }
    keys[i].resize(len + 1);
    napi_get_value_string_utf8(env, k, &keys[i][0], len + 1, &len);
    keys[i].resize(len);
  }
  b.shapes.keys.push_back(std::move(keys));
  return Int(env, static_cast<int32_t>(b.shapes.keys.size() - 1));
}

napi_value DefineValue(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  TracerBinding& b = hot::ReadArgs<1>(env, info, argv);
  std::string text;
  if (!PutString(env, argv[0], text)) return ThrowArgType(env, "value", "a string", argv[0]);
  if (b.shapes.values.size() >= SlotShapes::kMaxValues) return Int(env, -1);
  b.shapes.values.push_back(text.substr(4));  // without PutString's length
  return Int(env, static_cast<int32_t>(b.shapes.values.size() - 1));
}

// The slots go straight into the thread's attribute bytes (thread_state.h):
// no allocation, no copy but Node-API's.
napi_value BeginSlots(napi_env env, napi_callback_info info) {
  napi_value argv[3 + SlotShapes::kMaxSlots];
  TracerBinding& b = hot::ReadArgs<3 + SlotShapes::kMaxSlots>(env, info, argv);
  uint32_t name;
  if (!hot::U32Arg(env, argv[0], "nameId", &name)) return nullptr;
  std::string& bytes = b.thread->attr_bytes;
  const size_t mark = bytes.size();
  bool threw = false;
  if (!WriteSlots(env, b, argv + 1, bytes, &threw)) {
    bytes.resize(mark);
    return threw ? nullptr : Int(env, kRefused);
  }
  const int64_t now = hotspan::clock::now_ticks();
  return hot::EndResult(env, hotspan::begin_with_attr_bytes(*b.thread, name, now, mark));
}

// Written past the thread's attribute bytes as scratch, copied by the track
// (into an open-span slot whose capacity stays), then cut off again.
napi_value AsyncBeginSlots(napi_env env, napi_callback_info info) {
  napi_value argv[4 + SlotShapes::kMaxSlots];
  TracerBinding& b = hot::ReadArgs<4 + SlotShapes::kMaxSlots>(env, info, argv);
  uint32_t track, name;
  if (!hot::TrackAndName(env, argv, &track, &name)) return nullptr;
  std::string& bytes = b.thread->attr_bytes;
  const size_t mark = bytes.size();
  bool threw = false;
  const bool ok = WriteSlots(env, b, argv + 2, bytes, &threw);
  uint64_t token = 0;
  if (ok) {
    token = b.tracer->async_begin(track, name, hotspan::clock::now_ticks(),
                                  std::string_view(bytes).substr(mark), 0, &b.async_caller);
  }
  bytes.resize(mark);
  if (!ok) return threw ? nullptr : Int(env, kRefused);
  return hot::TokenValue(env, token);
}

}  // namespace hotspan_addon::slots
