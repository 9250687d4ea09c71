#include "attr_values.h"

#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "arg_check.h"
#include "record/async_fast.h"
#include "record/attr_dict.h"
#include "record/attr_slots.h"
#include "record/clock.h"
#include "external_view.h"
#include "hot_path.h"
#include "record/small_copy.h"
#include "record/thread_state.h"
#include "tracer_binding.h"

namespace hotspan_addon::slots {

namespace {

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
bool PutString(napi_env env, napi_value v, hotspan::ByteStack& out) {
  const size_t start = out.size();
  // One pass into room for kOnePass bytes: a result short enough that no
  // character can have been cut off (4 bytes at most) is the whole string.
  char* p = out.grow(4 + kOnePass + 1) + 4;  // + the terminator Node-API writes
  size_t len;
  if (napi_get_value_string_utf8(env, v, p, kOnePass + 1, &len) != napi_ok) {
    out.cut(start);
    return false;
  }
  if (len + 4 > kOnePass) {  // maybe cut: measure, then read it whole
    napi_get_value_string_utf8(env, v, nullptr, 0, &len);
    out.cut(start);
    p = out.grow(4 + len + 1) + 4;
    napi_get_value_string_utf8(env, v, p, len + 1, &len);
  }
  const auto n = static_cast<uint32_t>(len);
  std::memcpy(p - 4, &n, 4);
  out.cut(start + 4 + len);
  return true;
}

// `v` slot-encoded (PutString), as a key or an interned value to keep.
bool Encoded(napi_env env, napi_value v, std::string* out) {
  hotspan::ByteStack bytes;
  if (!PutString(env, v, bytes)) return false;
  *out = std::string(bytes.from(0));
  return true;
}

// A RangeError that names the bad number: `what` then ", got <v>".
napi_value ThrowRange(napi_env env, const std::string& what, double v) {
  std::string msg = "hotspan: " + what + ", got ";
  if (std::isfinite(v)) {
    as::append_js_number(msg, v);
  } else {
    msg += std::isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
  }
  napi_throw_range_error(env, "ERR_OUT_OF_RANGE", msg.c_str());
  return nullptr;
}

napi_value ThrowBadCode(napi_env env, uint32_t code, size_t shapes) {
  return ThrowRange(env,
                    "code must name a defined shape (below " + std::to_string(shapes) +
                        ") and slot kinds 0 to 4",
                    code);
}

// A slot: its head (kind byte, key) then `n` bytes at `v` (none for a boolean).
HOTSPAN_HOT_INLINE void PutSlot(hotspan::ByteStack& out, as::Kind kind, const std::string& head, const void* v,
                                size_t n) {
  char* p = out.grow(head.size() + n);
  hotspan::copy_small(p, head.data(), head.size());
  *p = static_cast<char>(kind);
  if (n != 0) hotspan::copy_small(p + head.size(), static_cast<const char*>(v), n);
}

// The full form (attr_slots.h): each slot's head, then its value.
struct FullSlots {
  const SlotShapes::Shape& sh;
  hotspan::ByteStack& out;
  HOTSPAN_HOT_INLINE void start() { out.push_back(as::kTag); }
  HOTSPAN_HOT_INLINE void number(uint32_t i, double d) { PutSlot(out, as::kNumber, sh.heads[i], &d, 8); }
  HOTSPAN_HOT_INLINE void value(uint32_t i, const std::string& text, uint32_t) {
    PutSlot(out, as::kString, sh.heads[i], text.data(), text.size());
  }
  HOTSPAN_HOT_INLINE void boolean(uint32_t i, bool b) {
    PutSlot(out, b ? as::kTrue : as::kFalse, sh.heads[i], nullptr, 0);
  }
  // A string argument; false (nothing appended) when `v` is not a string.
  bool text(napi_env env, uint32_t i, napi_value v) {
    const size_t kind_at = out.size();
    PutSlot(out, as::kString, sh.heads[i], nullptr, 0);
    if (PutString(env, v, out)) return true;
    out.cut(kind_at);
    return false;
  }
  HOTSPAN_HOT_INLINE void finish() {}
};

// The compact form (attr_slots.h): the shape's dictionary id and the kinds,
// then the values only; an interned value with a dictionary id as that id.
struct CompactSlots {
  hotspan::ByteStack& out;
  size_t kinds_at = 0;
  uint32_t kinds = 0;
  HOTSPAN_HOT_INLINE void start(uint32_t dict_id) {
    char* p = out.grow(as::kCompactHead);
    const auto id = static_cast<uint16_t>(dict_id);
    p[0] = as::kCompactTag;
    std::memcpy(p + 1, &id, 2);
    kinds_at = out.size() - 1;
  }
  HOTSPAN_HOT_INLINE void put(uint32_t i, as::CompactKind k, const void* v, size_t n) {
    kinds |= static_cast<uint32_t>(k) << (as::kCompactKindBits * i);
    hotspan::copy_small(out.grow(n), static_cast<const char*>(v), n);
  }
  HOTSPAN_HOT_INLINE void number(uint32_t i, double d) { put(i, as::kCompactNumber, &d, 8); }
  HOTSPAN_HOT_INLINE void value(uint32_t i, const std::string& text, uint32_t dict_id) {
    if (dict_id != hotspan::AttrDict::kNone) {
      put(i, as::kCompactValue, &dict_id, 4);
    } else {
      put(i, as::kCompactText, text.data(), text.size());  // already u32 length, bytes
    }
  }
  HOTSPAN_HOT_INLINE void boolean(uint32_t i, bool b) {
    const char c = b ? 1 : 0;
    put(i, as::kCompactBool, &c, 1);
  }
  bool text(napi_env env, uint32_t i, napi_value v) {
    if (!PutString(env, v, out)) return false;
    kinds |= static_cast<uint32_t>(as::kCompactText) << (as::kCompactKindBits * i);
    return true;
  }
  HOTSPAN_HOT_INLINE void finish() { *out.at(kinds_at) = static_cast<char>(kinds); }
};

// Appends the slots of shape `sh` that `code` (SlotKind) describes through
// writer `w` (started), their values from the slot view, the code or
// args[0..] (nullptr: none may be an argument). false: a value with no slot
// form (nothing thrown), or a bad code or value id (thrown: *threw); the
// caller cuts the bytes back.
template <class Writer>
HOTSPAN_HOT_INLINE bool FillSlots(napi_env env, const SlotShapes& shapes, const SlotShapes::Shape& sh, uint32_t code,
                                  napi_value* args, Writer& w, bool* threw) {
  const uint32_t whole = code;
  const double* in = shapes.in->data();
  const size_t n_values = shapes.values.size();
  for (uint32_t i = 0; i < sh.slots; ++i, code >>= kKindBits) {
    const uint32_t kind = code & ((1u << kKindBits) - 1);
    if (kind == kViewNumber) {
      const double d = in[i];
      if (HOTSPAN_UNLIKELY(!std::isfinite(d))) return false;
      w.number(i, d);
      continue;
    }
    if (kind == kViewValue) {
      const double d = in[i];
      const auto id = static_cast<uint32_t>(d >= 0 && d < n_values ? d : 0);
      if (HOTSPAN_UNLIKELY(!(d >= 0 && d < n_values) || id != d)) {
        ThrowRange(env, "slot " + std::to_string(i) + " must hold an interned value id (below " +
                            std::to_string(n_values) + ")",
                   d);
        *threw = true;
        return false;
      }
      w.value(i, shapes.values[id], shapes.value_dict_ids[id]);
      continue;
    }
    if (kind == kFalse || kind == kTrue) {
      w.boolean(i, kind == kTrue);
      continue;
    }
    if (kind != kArgument || args == nullptr) {
      ThrowBadCode(env, whole, shapes.shapes.size());
      *threw = true;
      return false;
    }
    napi_value v = args[i];
    // Each read refuses another type (no exception), so no typeof first.
    double d;
    bool f;
    if (napi_get_value_double(env, v, &d) == napi_ok) {
      if (!std::isfinite(d)) return false;
      w.number(i, d);
      continue;
    }
    if (w.text(env, i, v)) continue;
    if (napi_get_value_bool(env, v, &f) != napi_ok) return false;
    w.boolean(i, f);
  }
  w.finish();
  return true;
}

// Appends the attribute bytes of `code` to `out`: the compact form when
// the shape has a dictionary id, else the full form. As FillSlots.
HOTSPAN_HOT_INLINE bool WriteSlots(napi_env env, const SlotShapes& shapes, uint32_t code, napi_value* args,
                                   hotspan::ByteStack& out, bool* threw) {
  const uint32_t shape = code >> kShapeShift;
  if (HOTSPAN_UNLIKELY(shape >= shapes.shapes.size())) {
    ThrowBadCode(env, code, shapes.shapes.size());
    *threw = true;
    return false;
  }
  const SlotShapes::Shape& sh = shapes.shapes[shape];
  if (sh.dict_id != hotspan::AttrDict::kNone) {
    CompactSlots w{out};
    w.start(sh.dict_id);
    return FillSlots(env, shapes, sh, code, args, w, threw);
  }
  FullSlots w{sh, out};
  w.start();
  return FillSlots(env, shapes, sh, code, args, w, threw);
}

// Begins the span `name` with the slots of `code`, written straight into the
// thread's attribute bytes (thread_state.h): no allocation, no copy but
// Node-API's.
HOTSPAN_HOT_INLINE napi_value Begin(napi_env env, TracerBinding& b, uint32_t name, uint32_t code, napi_value* args) {
  hotspan::ByteStack& bytes = b.thread->attr_bytes;
  const size_t mark = bytes.size();
  bool threw = false;
  if (!WriteSlots(env, b.shapes, code, args, bytes, &threw)) {
    bytes.cut(mark);
    return threw ? nullptr : Int(env, kRefused);
  }
  const int64_t now = hotspan::clock::now_ticks();
  return hot::EndResult(env, hotspan::fast::begin_with_attr_bytes(*b.thread, name, now, mark));
}

// AsyncBeginWith's answer when an exception is pending.
constexpr int64_t kThrew = -2;

// The async begin with the slots of `code`: the token's local id, 0
// (refused: closed, an unknown track or name), kRefused (a value with no
// slot form), or kThrew (an exception is pending). The bytes are written
// past the thread's attribute bytes as scratch, copied by the track (into an
// open-span slot whose capacity stays), then cut off again.
int64_t AsyncBeginWith(napi_env env, TracerBinding& b, uint32_t track, uint32_t name, uint32_t code, napi_value* args) {
  hotspan::ByteStack& bytes = b.thread->attr_bytes;
  const size_t mark = bytes.size();
  bool threw = false;
  const bool ok = WriteSlots(env, b.shapes, code, args, bytes, &threw);
  uint64_t token = 0;
  if (ok) {
    token = hotspan::fast::async_begin(*b.tracer, b.async_caller, track, name, hotspan::clock::now_ticks(),
                                       bytes.from(mark));
  }
  bytes.cut(mark);
  if (!ok) return threw ? kThrew : kRefused;
  return static_cast<uint32_t>(token);
}

HOTSPAN_COLD napi_value ThrowViewU32(napi_env env, const char* what, double d) {
  return ThrowRange(env, std::string("slot view ") + what + " must be a uint32", d);
}

// A view entry that must hold a uint32 (the name id, the code); false: a
// RangeError naming it is pending.
HOTSPAN_HOT_INLINE bool ViewU32(napi_env env, double d, const char* what, uint32_t* out) {
  if (ExactU32(d, out)) return true;
  ThrowViewU32(env, what, d);
  return false;
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
  if (b.shapes.shapes.size() >= SlotShapes::kMaxShapes) return Int(env, -1);
  SlotShapes::Shape shape;
  shape.slots = n;
  std::array<std::string_view, SlotShapes::kMaxSlots> keys;
  for (uint32_t i = 0; i < n; ++i) {
    napi_value k;
    napi_get_element(env, argv[0], i, &k);
    std::string key;
    if (!Encoded(env, k, &key)) return ThrowArgType(env, "keys", "an array of 1 to 4 strings", argv[0]);
    shape.heads[i] = '\0' + key;  // the kind's byte, set per span
  }
  for (uint32_t i = 0; i < n; ++i) keys[i] = std::string_view(shape.heads[i]).substr(5);  // past kind, length
  shape.dict_id = b.tracer->attr_dict().add_shape(keys.data(), n);
  b.shapes.shapes.push_back(std::move(shape));
  return Int(env, static_cast<int32_t>(b.shapes.shapes.size() - 1));
}

napi_value DefineValue(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  TracerBinding& b = hot::ReadArgs<1>(env, info, argv);
  std::string text;
  if (!Encoded(env, argv[0], &text)) return ThrowArgType(env, "value", "a string", argv[0]);
  if (b.shapes.values.size() >= SlotShapes::kMaxValues) return Int(env, -1);
  b.shapes.value_dict_ids.push_back(b.tracer->attr_dict().add_value(std::string_view(text).substr(4)));
  b.shapes.values.push_back(std::move(text));
  return Int(env, static_cast<int32_t>(b.shapes.values.size() - 1));
}

// The buffer holds the memory alive (external_view.h).
napi_value SlotView(napi_env env, napi_callback_info info) {
  TracerBinding& b = hot::ReadArgs<0>(env, info, nullptr);
  return ExternalView(env, b.shapes.in, napi_float64_array);
}

napi_value BeginSlots(napi_env env, napi_callback_info info) {
  napi_value argv[2 + SlotShapes::kMaxSlots];
  TracerBinding& b = hot::ReadArgs<2 + SlotShapes::kMaxSlots>(env, info, argv);
  uint32_t name, code;
  if (!hot::U32Arg(env, argv[0], "nameId", &name) || !hot::U32Arg(env, argv[1], "code", &code)) return nullptr;
  return Begin(env, b, name, code, argv + 2);
}

napi_value BeginViewOf(napi_env env, TracerBinding& b) {
  const double* in = b.shapes.in->data();
  uint32_t name, code;
  if (!ViewU32(env, in[SlotShapes::kNameAt], "name id", &name) ||
      !ViewU32(env, in[SlotShapes::kCodeAt], "code", &code))
    return nullptr;
  return Begin(env, b, name, code, nullptr);
}

napi_value AsyncBeginSlots(napi_env env, napi_callback_info info) {
  napi_value argv[3 + SlotShapes::kMaxSlots];
  TracerBinding& b = hot::ReadArgs<3 + SlotShapes::kMaxSlots>(env, info, argv);
  uint32_t track, name;
  if (!hot::TrackAndName(env, argv, &track, &name)) return nullptr;
  uint32_t code;
  if (!hot::U32Arg(env, argv[2], "code", &code)) return nullptr;
  const int64_t local = AsyncBeginWith(env, b, track, name, code, argv + 3);
  if (local == kThrew) return nullptr;
  if (local == kRefused) return Int(env, kRefused);
  return hot::TokenValue(env, static_cast<uint64_t>(local));
}

napi_value AsyncBeginValuesOf(napi_env env, TracerBinding& b) {
  auto& in = *b.async_args.in;
  uint32_t track, name, code;
  // Not a track and name id: refused, as asyncBegin()'s view form refuses them.
  if (!ExactU32(in[AsyncArgs::kTrack], &track) || !ExactU32(in[AsyncArgs::kName], &name)) {
    in[AsyncArgs::kLocal] = 0;
    return nullptr;
  }
  if (!ViewU32(env, b.shapes.in->data()[SlotShapes::kCodeAt], "code", &code)) return nullptr;
  const int64_t local = AsyncBeginWith(env, b, track, name, code, nullptr);
  if (local != kThrew) in[AsyncArgs::kLocal] = static_cast<double>(local);
  return nullptr;
}

}  // namespace hotspan_addon::slots
