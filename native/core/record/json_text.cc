#include "record/json_text.h"

#include <cstdint>
#include <cstring>

#include "record/utf8_seq.h"

namespace hotspan::json_text {

namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool read_hex4(Scan& s, uint32_t* v) {
  if (s.e - s.p < 4) return false;
  uint32_t r = 0;
  for (int k = 0; k < 4; ++k) {
    int d = hex_digit(s.p[k]);
    if (d < 0) return false;
    r = r << 4 | static_cast<uint32_t>(d);
  }
  s.p += 4;
  *v = r;
  return true;
}

bool scan_container(Scan& s, int depth, char close);

}  // namespace

// ---- UTF-8 ----

bool valid_utf8(const std::string& s) {
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  // ASCII fast path, 8 bytes at a time.
  while (i + 8 <= n) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    if (w & 0x8080808080808080ull) break;
    i += 8;
  }
  while (i < n) {
    if (b[i] < 0x80) {
      ++i;
      continue;
    }
    size_t bad = 0;
    size_t len = utf8_seq(b, n, i, &bad);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

// s with every invalid subpart replaced by U+FFFD.
std::string sanitized(const std::string& s) {
  if (valid_utf8(s)) return s;
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  std::string out;
  out.reserve(n + 8);
  size_t i = 0;
  while (i < n) {
    size_t bad = 0;
    size_t len = utf8_seq(b, n, i, &bad);
    if (len != 0) {
      out.append(s, i, len);
      i += len;
    } else {
      out.append("\xEF\xBF\xBD", 3);
      i += bad;
    }
  }
  return out;
}

// ---- a strict JSON scanner (RFC 8259, what JSON.parse accepts) ----

// At '"': the decoded string into *out (when non-null). Lone surrogates
// become U+FFFD (what a JS string's UTF-8 encoding gives).
bool scan_string(Scan& s, std::string* out) {
  ++s.p;
  while (s.p < s.e) {
    char c = *s.p;
    if (c == '"') {
      ++s.p;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) return false;
    if (c != '\\') {
      const char* run = s.p;
      while (s.p < s.e && *s.p != '"' && *s.p != '\\' && static_cast<unsigned char>(*s.p) >= 0x20) ++s.p;
      if (out) out->append(run, static_cast<size_t>(s.p - run));
      continue;
    }
    if (++s.p >= s.e) return false;
    char esc = *s.p++;
    char simple = 0;
    switch (esc) {
      case '"': simple = '"'; break;
      case '\\': simple = '\\'; break;
      case '/': simple = '/'; break;
      case 'b': simple = '\b'; break;
      case 'f': simple = '\f'; break;
      case 'n': simple = '\n'; break;
      case 'r': simple = '\r'; break;
      case 't': simple = '\t'; break;
      case 'u': break;
      default: return false;
    }
    if (esc != 'u') {
      if (out) out->push_back(simple);
      continue;
    }
    uint32_t cp;
    if (!read_hex4(s, &cp)) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      // A high surrogate: a pair only with an escaped low one right after.
      uint32_t lo = 0;
      Scan peek = s;
      if (peek.e - peek.p >= 6 && peek.p[0] == '\\' && peek.p[1] == 'u') {
        peek.p += 2;
        if (read_hex4(peek, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
          s = peek;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else {
          cp = 0xFFFD;
        }
      } else {
        cp = 0xFFFD;
      }
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      cp = 0xFFFD;
    }
    if (out) append_utf8(*out, cp);
  }
  return false;
}

bool scan_number(Scan& s) {
  if (s.p < s.e && *s.p == '-') ++s.p;
  if (s.p >= s.e) return false;
  if (*s.p == '0') {
    ++s.p;
  } else if (digit(*s.p)) {
    while (s.p < s.e && digit(*s.p)) ++s.p;
  } else {
    return false;
  }
  if (s.p < s.e && *s.p == '.') {
    ++s.p;
    if (s.p >= s.e || !digit(*s.p)) return false;
    while (s.p < s.e && digit(*s.p)) ++s.p;
  }
  if (s.p < s.e && (*s.p == 'e' || *s.p == 'E')) {
    ++s.p;
    if (s.p < s.e && (*s.p == '+' || *s.p == '-')) ++s.p;
    if (s.p >= s.e || !digit(*s.p)) return false;
    while (s.p < s.e && digit(*s.p)) ++s.p;
  }
  return true;
}

bool scan_literal(Scan& s, const char* lit) {
  size_t n = std::strlen(lit);
  if (static_cast<size_t>(s.e - s.p) < n || std::memcmp(s.p, lit, n) != 0) return false;
  s.p += n;
  return true;
}

namespace {

bool scan_container(Scan& s, int depth, char close) {
  if (depth > 64) return false;
  ++s.p;
  s.ws();
  if (s.p < s.e && *s.p == close) {
    ++s.p;
    return true;
  }
  for (;;) {
    if (close == '}') {
      if (s.p >= s.e || *s.p != '"' || !scan_string(s, nullptr)) return false;
      s.ws();
      if (s.p >= s.e || *s.p != ':') return false;
      ++s.p;
      s.ws();
    }
    if (!scan_value(s, depth + 1)) return false;
    s.ws();
    if (s.p >= s.e) return false;
    if (*s.p == close) {
      ++s.p;
      return true;
    }
    if (*s.p != ',') return false;
    ++s.p;
    s.ws();
  }
}

}  // namespace

bool scan_value(Scan& s, int depth) {
  if (s.p >= s.e) return false;
  switch (*s.p) {
    case '"': return scan_string(s, nullptr);
    case '{': return scan_container(s, depth, '}');
    case '[': return scan_container(s, depth, ']');
    case 't': return scan_literal(s, "true");
    case 'f': return scan_literal(s, "false");
    case 'n': return scan_literal(s, "null");
    default: return scan_number(s);
  }
}

bool is_object(const char* b, const char* e) {
  Scan s{b, e};
  s.ws();
  if (s.p >= s.e || *s.p != '{' || !scan_value(s, 0)) return false;
  s.ws();
  return s.p == s.e;
}

// Moved from the Chrome JSON writer: attribute slots (attr_slots.cc) render their strings with it too.
void append_escaped(std::string& out, const char* s, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  const unsigned char* b = reinterpret_cast<const unsigned char*>(s);
  size_t i = 0, run = 0;  // [run, i) is a pending verbatim run
  auto flush = [&]() {
    if (i > run) out.append(s + run, i - run);
  };
  while (i < n) {
    unsigned c = b[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c < 0x80) {
      flush();
      if (c == '"') {
        out.append("\\\"", 2);
      } else if (c == '\\') {
        out.append("\\\\", 2);
      } else {
        char e[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out.append(e, 6);
      }
      run = ++i;
      continue;
    }
    size_t bad = 0;
    const size_t len = utf8_seq(b, n, i, &bad);
    if (len != 0) {
      i += len;
      continue;
    }
    flush();
    out.append("\\ufffd", 6);
    i += bad;
    run = i;
  }
  flush();
}

}  // namespace hotspan::json_text
