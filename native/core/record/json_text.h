// JSON text and UTF-8 as the writers need them: a strict scanner (RFC 8259,
// what JSON.parse accepts) for attribute objects, and UTF-8 validation and
// repair (invalid bytes become U+FFFD per maximal subpart, as V8 and
// TextDecoder decode them). One implementation for both writers.
#pragma once

#include <string>

namespace hotspan::json_text {

bool valid_utf8(const std::string& s);
// Appends [s, s + n) as the inside of a JSON string: '"', '\\' and controls
// (as \u00XX) escaped, valid UTF-8 as is, each invalid subpart as \ufffd.
void append_escaped(std::string& out, const char* s, size_t n);
// s with every invalid subpart replaced by U+FFFD.
std::string sanitized(const std::string& s);

inline bool json_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
inline bool digit(char c) { return c >= '0' && c <= '9'; }

// A position in [p, e): each scan_ function starts at the first byte of its
// value and, on success, leaves p just past it.
struct Scan {
  const char* p;
  const char* e;
  void ws() {
    while (p < e && json_ws(*p)) ++p;
  }
};

// At '"': the decoded string into *out (when non-null). Lone surrogates
// become U+FFFD (what a JS string's UTF-8 encoding gives).
bool scan_string(Scan& s, std::string* out);
bool scan_number(Scan& s);
bool scan_literal(Scan& s, const char* lit);
// Any value, containers nested at most 64 deep.
bool scan_value(Scan& s, int depth);
// [b, e), whitespace around it aside, is exactly one JSON object.
bool is_object(const char* b, const char* e);

}  // namespace hotspan::json_text
