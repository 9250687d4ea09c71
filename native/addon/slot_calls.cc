#include "slot_calls.h"

#include <cmath>
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

// argv[0] is the shape id, argv[1..] its values. false: a value of another
// type (nothing thrown); a bad shape id throws and returns false too.
bool ReadSlots(napi_env env, TracerBinding& b, napi_value* argv, std::string& out, bool* threw) {
  uint32_t shape;
  if (napi_get_value_uint32(env, argv[0], &shape) != napi_ok || shape >= b.shapes.keys.size()) {
    ThrowArgType(env, "shape", "a shape id", argv[0]);
    *threw = true;
    return false;
  }
  const std::vector<std::string>& keys = b.shapes.keys[shape];
  out.reserve(64);
  out.push_back(as::kTag);
  for (size_t i = 0; i < keys.size(); ++i) {
    napi_value v = argv[1 + i];
    const std::string& key = keys[i];
    const auto key_len = static_cast<uint32_t>(key.size());
    napi_valuetype t;
    napi_typeof(env, v, &t);
    if (t == napi_number) {
      double d;
      napi_get_value_double(env, v, &d);
      if (!std::isfinite(d)) return false;
      put_key(out, as::kNumber, key.data(), key_len);
      as::put_number(out, d);
    } else if (t == napi_string) {
      size_t len;
      napi_get_value_string_utf8(env, v, nullptr, 0, &len);
      put_key(out, as::kString, key.data(), key_len);
      as::put_u32(out, static_cast<uint32_t>(len));
      const size_t at = out.size();
      out.resize(at + len + 1);  // room for the terminator Node-API writes
      napi_get_value_string_utf8(env, v, &out[at], len + 1, &len);
      out.resize(at + len);
    } else if (t == napi_boolean) {
      bool f;
      napi_get_value_bool(env, v, &f);
      put_key(out, f ? as::kTrue : as::kFalse, key.data(), key_len);
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

napi_value DefineShape(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  TracerBinding& b = *static_cast<TracerBinding*>(data);
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

napi_value BeginSlots(napi_env env, napi_callback_info info) {
  size_t argc = 2 + SlotShapes::kMaxSlots;
  napi_value argv[2 + SlotShapes::kMaxSlots];
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  TracerBinding& b = *static_cast<TracerBinding*>(data);
  uint32_t name;
  if (napi_get_value_uint32(env, argv[0], &name) != napi_ok) {
    return ThrowArgType(env, "nameId", "a number", argv[0]);
  }
  std::string attrs;
  bool threw = false;
  if (!ReadSlots(env, b, argv + 1, attrs, &threw)) return threw ? nullptr : Int(env, kRefused);
  const int64_t now = hotspan::clock::now_ticks();
  return hot::StatusValue(env, hotspan::begin_with_attrs(*b.thread, name, now, std::move(attrs)));
}

napi_value AsyncBeginSlots(napi_env env, napi_callback_info info) {
  size_t argc = 3 + SlotShapes::kMaxSlots;
  napi_value argv[3 + SlotShapes::kMaxSlots];
  void* data;
  napi_get_cb_info(env, info, &argc, argv, nullptr, &data);
  TracerBinding& b = *static_cast<TracerBinding*>(data);
  uint32_t track, name;
  if (!hot::TrackAndName(env, argv, &track, &name)) return nullptr;
  std::string attrs;
  bool threw = false;
  if (!ReadSlots(env, b, argv + 2, attrs, &threw)) return threw ? nullptr : Int(env, kRefused);
  return hot::TokenValue(env, b.tracer->async_begin(track, name, hotspan::clock::now_ticks(), std::move(attrs)));
}

}  // namespace hotspan_addon::slots
