// The members of a span's attribute object (JSON object text, as timelines
// keep it), typed as the protobuf writers encode them: strings, bools, safe
// integers (|v| < 2^53, what JS writes without loss), other numbers as
// doubles, nested values and null as their JSON text. One reading for the
// Perfetto and OTLP writers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace hotspan {

struct AttrValue {
  enum Kind : uint8_t { kString, kBool, kInt, kDouble, kJson } kind = kString;
  // kString: the decoded value, a view of the object's text when it has no
  // escape (most do: no copy), else of the scratch; valid until the next member.
  std::string_view str;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  const char* json = nullptr;  // kJson: [json, json + json_n) as written
  size_t json_n = 0;
};

class AttrMemberVisitor {
 public:
  // `key`, decoded like a string value, is valid for the call.
  virtual void member(std::string_view key, const AttrValue& value) = 0;

 protected:
  ~AttrMemberVisitor() = default;
};

// Scratch strings reused across spans (no allocation per attribute): a key
// or string with an escape is decoded into them.
struct AttrScratch {
  std::string text, key, str;
};

// Calls `v` for each member of `raw` in order. Invalid UTF-8 is repaired
// first (U+FFFD). Returns false when the text is not one JSON object: the
// members already visited must then be undone by the caller, who writes
// [*b, *e) (the repaired text, trimmed) as one string instead. Whitespace
// only: true, nothing visited.
bool visit_attr_members(const std::string& raw, AttrScratch& sc, AttrMemberVisitor& v, const char** b,
                        const char** e);

// The same over [b, e), valid UTF-8 (a nested value a visit gave as kJson):
// false when it is not one object.
bool visit_object_members(const char* b, const char* e, AttrScratch& sc, AttrMemberVisitor& v);

// Calls `element` with each element's text of the JSON array [b, e) (valid
// UTF-8); false when it is not one array.
bool visit_array_elements(const char* b, const char* e, const std::function<void(const char*, const char*)>& element);

}  // namespace hotspan
