#include "output_check.h"

#include <vector>

namespace hotspan_fuzz {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (Unicode Table 3-7), or 0.
// Written apart from the core's utf8_seq.h on purpose: it checks that code.
size_t utf8_len(const unsigned char* s, size_t n, size_t i) {
  const unsigned c = s[i];
  if (c < 0x80) return 1;
  auto cont = [&](size_t k, unsigned lo, unsigned hi) {
    return i + k < n && s[i + k] >= lo && s[i + k] <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return cont(1, 0x80, 0xBF) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

bool valid_utf8(const char* p, size_t n) {
  const auto* s = reinterpret_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n;) {
    const size_t len = utf8_len(s, n, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

// ---- JSON (RFC 8259) ----

struct Json {
  const std::string& s;
  size_t i = 0;
  std::string err;

  bool fail(const char* what) {
    if (err.empty()) err = std::string(what) + " at byte " + std::to_string(i);
    return false;
  }
  bool at(char c) const { return i < s.size() && s[i] == c; }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  static bool hex(char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

  bool string() {
    ++i;  // '"'
    while (i < s.size()) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c == '"') {
        ++i;
        return true;
      }
      if (c < 0x20) return fail("control character in a string");
      if (c == '\\') {
        if (++i >= s.size()) break;
        const char e = s[i++];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k, ++i) {
            if (i >= s.size() || !hex(s[i])) return fail("bad \\u escape");
          }
        } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return fail("bad escape");
        }
        continue;
      }
      ++i;  // UTF-8 was checked for the whole document
    }
    return fail("unterminated string");
  }
  bool number() {
    if (at('-')) ++i;
    if (at('0')) {
      ++i;
    } else if (i < s.size() && digit(s[i])) {
      while (i < s.size() && digit(s[i])) ++i;
    } else {
      return fail("bad number");
    }
    if (at('.')) {
      ++i;
      if (!(i < s.size() && digit(s[i]))) return fail("bad fraction");
      while (i < s.size() && digit(s[i])) ++i;
    }
    if (at('e') || at('E')) {
      ++i;
      if (at('+') || at('-')) ++i;
      if (!(i < s.size() && digit(s[i]))) return fail("bad exponent");
      while (i < s.size() && digit(s[i])) ++i;
    }
    return true;
  }
  bool literal(const char* lit) {
    const std::string l(lit);
    if (s.compare(i, l.size(), l) != 0) return fail("bad literal");
    i += l.size();
    return true;
  }
  bool value(int depth) {
    if (depth > 512) return fail("nested too deep");
    ws();
    if (i >= s.size()) return fail("value expected");
    switch (s[i]) {
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      case '{':
      case '[': {
        const char close = s[i] == '{' ? '}' : ']';
        ++i;
        ws();
        if (at(close)) {
          ++i;
          return true;
        }
        for (;;) {
          if (close == '}') {
            ws();
            if (!at('"')) return fail("member name expected");
            if (!string()) return false;
            ws();
            if (!at(':')) return fail("':' expected");
            ++i;
          }
          if (!value(depth + 1)) return false;
          ws();
          if (at(close)) {
            ++i;
            return true;
          }
          if (!at(',')) return fail("',' or end of container expected");
          ++i;
        }
      }
      default: return number();
    }
  }
};

// ---- protobuf wire format ----

enum Msg { kNone, kTrace, kPacket, kEvent, kAnnotation, kInterned, kInternedName, kTrackDesc,
           kProcessDesc, kThreadDesc };

// What a length-delimited field of `m` holds: a message, a string (kNone with
// *is_string), or opaque bytes. Field numbers from perfetto_trace.proto.
Msg sub(Msg m, uint64_t field, bool* is_string) {
  *is_string = false;
  switch (m) {
    case kTrace: return field == 1 ? kPacket : kNone;
    case kPacket:
      if (field == 11) return kEvent;
      if (field == 12) return kInterned;
      if (field == 60) return kTrackDesc;
      return kNone;
    case kEvent:
      if (field == 4) return kAnnotation;
      *is_string = field == 23;  // name
      return kNone;
    case kAnnotation:
      *is_string = field == 10 || field == 6 || field == 9;  // name, string_value, legacy_json_value
      return kNone;
    case kInterned: return field == 2 || field == 3 ? kInternedName : kNone;  // event_names, debug_annotation_names
    case kInternedName: *is_string = field == 2; return kNone;
    case kTrackDesc:
      *is_string = field == 2;  // name
      if (field == 3) return kProcessDesc;
      if (field == 4) return kThreadDesc;
      return kNone;
    case kProcessDesc: *is_string = field == 6; return kNone;
    case kThreadDesc: *is_string = field == 5; return kNone;
    case kNone: return kNone;
  }
  return kNone;
}

bool varint(const std::string& s, size_t& i, size_t end, uint64_t* v) {
  uint64_t r = 0;
  for (int k = 0; k < 10; ++k) {
    if (i >= end) return false;
    const auto b = static_cast<uint8_t>(s[i++]);
    r |= static_cast<uint64_t>(b & 0x7F) << (7 * k);
    if (!(b & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}

std::string message(const std::string& s, size_t i, size_t end, Msg m) {
  while (i < end) {
    const size_t at = i;
    uint64_t key = 0, v = 0;
    if (!varint(s, i, end, &key)) return "bad key varint at byte " + std::to_string(at);
    const uint64_t field = key >> 3;
    const unsigned wire = key & 7;
    if (field == 0 || field > 536870911) return "bad field number at byte " + std::to_string(at);
    if (wire == 0) {
      if (!varint(s, i, end, &v)) return "bad varint at byte " + std::to_string(at);
    } else if (wire == 1 || wire == 5) {
      const size_t w = wire == 1 ? 8 : 4;
      if (end - i < w) return "truncated fixed field at byte " + std::to_string(at);
      i += w;
    } else if (wire == 2) {
      if (!varint(s, i, end, &v) || v > end - i) return "bad length at byte " + std::to_string(at);
      bool is_string = false;
      const Msg child = sub(m, field, &is_string);
      if (child != kNone) {
        std::string e = message(s, i, i + v, child);
        if (!e.empty()) return e;
      } else if (is_string && !valid_utf8(s.data() + i, v)) {
        return "string field " + std::to_string(field) + " not UTF-8 at byte " + std::to_string(i);
      }
      i += v;
    } else {
      return "wire type " + std::to_string(wire) + " at byte " + std::to_string(at);
    }
  }
  return {};
}

}  // namespace

std::string json_problem(const std::string& json) {
  if (!valid_utf8(json.data(), json.size())) return "not UTF-8";
  Json j{json, 0, {}};
  if (!j.value(0)) return j.err;
  j.ws();
  if (j.i != json.size()) return "trailing bytes at " + std::to_string(j.i);
  return {};
}

std::string perfetto_problem(const std::string& pb) { return message(pb, 0, pb.size(), kTrace); }

}  // namespace hotspan_fuzz
