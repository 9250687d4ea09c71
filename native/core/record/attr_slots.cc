#include "record/attr_slots.h"

#include <charconv>
#include <cstring>

#include "record/attr_dict.h"
#include "record/json_text.h"

namespace hotspan::attr_slots {

void append_js_number(std::string& out, double v) {
  if (v == 0) {  // -0 too, as JSON.stringify writes it
    out.push_back('0');
    return;
  }
  char buf[32];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  // buf: [-]d[.ddd]e(+|-)xx, the shortest digits that read back as v.
  const char* p = buf;
  if (*p == '-') {
    out.push_back('-');
    ++p;
  }
  char digits[20];
  int k = 0;
  for (; *p != 'e'; ++p) {
    if (*p != '.') digits[k++] = *p;
  }
  int e = 0;
  std::from_chars(p[1] == '+' ? p + 2 : p + 1, r.ptr, e);
  const int n = e + 1;  // v = 0.digits * 10^n (ECMA-262 Number::toString)
  if (k <= n && n <= 21) {
    out.append(digits, k);
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, n);
    out.push_back('.');
    out.append(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    out.append("0.", 2);
    out.append(static_cast<size_t>(-n), '0');
    out.append(digits, k);
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out.append(digits + 1, k - 1);
    }
    out.push_back('e');
    out.push_back(n - 1 < 0 ? '-' : '+');
    char exp[8];
    const std::to_chars_result x = std::to_chars(exp, exp + sizeof exp, n - 1 < 0 ? 1 - n : n - 1);
    out.append(exp, x.ptr);
  }
}

namespace {

uint32_t get_u32(const char*& p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  p += 4;
  return v;
}

void append_string(std::string& out, const char* s, size_t n) {
  out.push_back('"');
  json_text::append_escaped(out, s, n);
  out.push_back('"');
}

// The compact form's JSON through `dict`; false: it does not parse.
bool compact_json(std::string_view stored, const AttrDict* dict, std::string& out) {
  if (dict == nullptr || stored.size() < kCompactHead) return false;
  uint16_t shape_id;
  std::memcpy(&shape_id, stored.data() + 1, 2);
  uint32_t kinds = static_cast<uint8_t>(stored[3]);
  if (shape_id >= dict->shapes()) return false;
  const AttrDict::Shape& shape = dict->shape(shape_id);
  const char* p = stored.data() + kCompactHead;
  const char* const e = stored.data() + stored.size();
  auto take = [&](size_t n) { return static_cast<size_t>(e - p) >= n; };
  out = "{";
  for (uint32_t i = 0; i < shape.slots; ++i, kinds >>= kCompactKindBits) {
    if (i > 0) out.push_back(',');
    append_string(out, shape.keys[i].data(), shape.keys[i].size());
    out.push_back(':');
    switch (kinds & ((1u << kCompactKindBits) - 1)) {
      case kCompactNumber: {
        double v;
        if (!take(8)) return false;
        std::memcpy(&v, p, 8);
        p += 8;
        if (v - v != 0) return false;
        append_js_number(out, v);
        break;
      }
      case kCompactValue: {
        if (!take(4)) return false;
        const uint32_t id = get_u32(p);
        if (id >= dict->values()) return false;
        const std::string_view text = dict->value(id);
        append_string(out, text.data(), text.size());
        break;
      }
      case kCompactText: {
        if (!take(4)) return false;
        const uint32_t n = get_u32(p);
        if (!take(n)) return false;
        append_string(out, p, n);
        p += n;
        break;
      }
      default: {  // kCompactBool
        if (!take(1)) return false;
        const bool b = *p++ != 0;
        out.append(b ? "true" : "false", b ? 4 : 5);
        break;
      }
    }
  }
  out.push_back('}');
  return p == e;
}

}  // namespace

std::string as_json(std::string_view stored, const AttrDict* dict) {
  if (!is_slots(stored)) return std::string(stored);
  if (stored[0] == kCompactTag) {
    std::string out;
    return compact_json(stored, dict, out) ? out : std::string(stored);
  }
  std::string out = "{";
  const char* p = stored.data() + 1;
  const char* const e = stored.data() + stored.size();
  // Slots come from the addon, but text from other producers (the C ABI)
  // may start with kTag too: anything that does not parse is kept as is.
  auto take = [&](size_t n) { return static_cast<size_t>(e - p) >= n; };
  while (p < e) {
    const char kind = *p++;
    if (!take(4)) return std::string(stored);
    const uint32_t key_len = get_u32(p);
    if (!take(key_len)) return std::string(stored);
    if (out.size() > 1) out.push_back(',');
    append_string(out, p, key_len);
    p += key_len;
    out.push_back(':');
    switch (kind) {
      case kNumber: {
        double v;
        if (!take(8)) return std::string(stored);
        std::memcpy(&v, p, 8);
        p += 8;
        if (v - v != 0) return std::string(stored);  // not finite: never stored by the addon
        append_js_number(out, v);
        break;
      }
      case kString: {
        if (!take(4)) return std::string(stored);
        const uint32_t n = get_u32(p);
        if (!take(n)) return std::string(stored);
        append_string(out, p, n);
        p += n;
        break;
      }
      case kTrue: out.append("true", 4); break;
      case kFalse: out.append("false", 5); break;
      default: return std::string(stored);
    }
  }
  out.push_back('}');
  return out;
}

}  // namespace hotspan::attr_slots
