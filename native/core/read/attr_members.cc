#include "read/attr_members.h"

#include <charconv>
#include <cmath>

#include "record/json_text.h"

namespace hotspan {
namespace {

using namespace json_text;

double parse_double(const char* b, const char* e) {
  double v = 0;
  auto r = std::from_chars(b, e, v);
  if (r.ec == std::errc::result_out_of_range) {
    // Past the double range: what JS Number() gives (infinity, or a zero
    // for an underflow), signed.
    const bool neg = *b == '-';
    const char* x = b;
    while (x < e && *x != 'e' && *x != 'E') ++x;
    const bool under = x + 1 < e && x[1] == '-';
    v = under ? 0.0 : HUGE_VAL;
    if (neg) v = -v;
  }
  return v;
}

// At '"': the decoded string into `out`, a view of the text itself when it
// has no escape (so nothing to decode), else decoded into `scratch`.
// Bytes a string's text holds as they are: not '"', '\\' or a control.
struct PlainBytes {
  bool at[256];
  constexpr PlainBytes() : at() {
    for (int c = 0; c < 256; ++c) at[c] = c >= 0x20 && c != '"' && c != '\\';
  }
};
constexpr PlainBytes kPlain;

bool scan_view(Scan& s, std::string& scratch, std::string_view& out) {
  const char* b = s.p + 1;
  const char* p = b;
  while (p < s.e && kPlain.at[static_cast<unsigned char>(*p)]) ++p;  // one load a byte
  if (p < s.e && *p == '"') {
    out = std::string_view(b, static_cast<size_t>(p - b));
    s.p = p + 1;
    return true;
  }
  scratch.clear();
  if (!scan_string(s, &scratch)) return false;
  out = scratch;
  return true;
}

// At a value: scans it into `val`.
bool scan_member_value(Scan& s, AttrScratch& sc, AttrValue& val) {
  const char* v0 = s.p;
  const char c = *s.p;
  if (c == '"') {
    val.kind = AttrValue::kString;
    return scan_view(s, sc.str, val.str);
  }
  if (c == 't' || c == 'f') {
    val.kind = AttrValue::kBool;
    val.b = c == 't';
    return scan_literal(s, c == 't' ? "true" : "false");
  }
  if (c == '-' || digit(c)) {
    if (!scan_number(s)) return false;
    // Plain digits, at most 15 of them (below 2^53): the integer itself, no double parse.
    const char* d0 = v0 + (c == '-' ? 1 : 0);
    if (s.p - d0 <= 15) {
      int64_t n = 0;
      const char* q = d0;
      while (q < s.p && digit(*q)) n = n * 10 + (*q++ - '0');
      if (q == s.p) {
        val.kind = AttrValue::kInt;
        val.i = c == '-' ? -n : n;
        return true;
      }
    }
    const double d = parse_double(v0, s.p);
    if (std::trunc(d) == d && std::fabs(d) <= 9007199254740991.0) {
      val.kind = AttrValue::kInt;
      val.i = static_cast<int64_t>(d);
    } else {
      val.kind = AttrValue::kDouble;
      val.d = d;
    }
    return true;
  }
  if (!scan_value(s, 0)) return false;
  val.kind = AttrValue::kJson;
  val.json = v0;
  val.json_n = static_cast<size_t>(s.p - v0);
  return true;
}

}  // namespace

bool visit_attr_members(const std::string& raw, AttrScratch& sc, AttrMemberVisitor& v, const char** bp,
                        const char** ep) {
  const std::string* text = &raw;
  if (!valid_utf8(raw)) {
    sc.text = sanitized(raw);
    text = &sc.text;
  }
  const char* b = text->data();
  const char* e = b + text->size();
  while (b < e && json_ws(*b)) ++b;
  while (e > b && json_ws(e[-1])) --e;
  *bp = b;
  *ep = e;
  if (b == e) return true;
  return visit_object_members(b, e, sc, v);
}

bool visit_object_members(const char* b, const char* e, AttrScratch& sc, AttrMemberVisitor& v) {
  while (b < e && json_ws(*b)) ++b;
  while (e > b && json_ws(e[-1])) --e;
  Scan s{b, e};
  if (s.p >= s.e) return false;
  if (*s.p != '{') return false;
  ++s.p;
  s.ws();
  if (s.p < s.e && *s.p == '}') return s.p + 1 == s.e;
  AttrValue val;
  std::string_view key;
  for (;;) {
    if (s.p >= s.e || *s.p != '"' || !scan_view(s, sc.key, key)) return false;
    s.ws();
    if (s.p >= s.e || *s.p != ':') return false;
    ++s.p;
    s.ws();
    if (s.p >= s.e || !scan_member_value(s, sc, val)) return false;
    v.member(key, val);
    s.ws();
    if (s.p < s.e && *s.p == ',') {
      ++s.p;
      s.ws();
      continue;
    }
    if (s.p < s.e && *s.p == '}') return s.p + 1 == s.e;
    return false;
  }
}

bool visit_array_elements(const char* b, const char* e, const std::function<void(const char*, const char*)>& element) {
  Scan s{b, e};
  s.ws();
  if (s.p >= s.e || *s.p != '[') return false;
  ++s.p;
  s.ws();
  if (s.p < s.e && *s.p == ']') return true;
  for (;;) {
    const char* v0 = s.p;
    if (s.p >= s.e || !scan_value(s, 1)) return false;
    element(v0, s.p);
    s.ws();
    if (s.p < s.e && *s.p == ',') {
      ++s.p;
      s.ws();
      continue;
    }
    return s.p < s.e && *s.p == ']';
  }
}

}  // namespace hotspan
