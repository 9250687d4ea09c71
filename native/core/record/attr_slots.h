// Span attributes in the form the addon's fast path stores them: typed
// slots in one byte string (key text, then the value as given: a double,
// UTF-8 text or a boolean), no JSON on the recording path. Side tables keep
// them next to attribute JSON text (async and group spans, the C ABI); a
// slot string starts with kTag, which JSON text never does, and readers
// get JSON text from as_json() (Timeline::freeze), the one place slots
// become text.
//
// A span of a shape the tracer's dictionary knows (attr_dict.h) stores the
// compact form instead: no keys, and interned strings by id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hotspan {
class AttrDict;
}

namespace hotspan::attr_slots {

constexpr char kTag = '\x01';
constexpr size_t kMaxSlots = 4;  // values per span in either form

// Layout after kTag, per slot: kind (kNumber, kString, kTrue, kFalse),
// u32 key length, key bytes, then a number's 8 bytes (host order) or a
// string's u32 length and bytes. The writer is the addon
// (native/addon/attr_values.cc), which keeps keys and repeated values in
// this encoding, so a slot is a copy.
enum Kind : char { kNumber = 'n', kString = 's', kTrue = 't', kFalse = 'f' };

// The compact form: kCompactTag, the dictionary's shape id (u16), the slot
// kinds (u8, kCompactKindBits per slot, slot 0 lowest), then per slot of
// the shape its value: a number's 8 bytes, an interned value's dictionary id
// (u32), a string's u32 length and bytes, or a boolean's byte (0 or 1).
constexpr char kCompactTag = '\x02';
enum CompactKind : uint8_t { kCompactNumber = 0, kCompactValue = 1, kCompactText = 2, kCompactBool = 3 };
constexpr uint32_t kCompactKindBits = 2;
constexpr size_t kCompactHead = 4;  // tag, shape id, kinds

inline bool is_slots(std::string_view s) { return !s.empty() && (s[0] == kTag || s[0] == kCompactTag); }

// JSON object text of `stored`: slots rendered (numbers as JavaScript's
// Number#toString writes them, so both backends show the same text), the
// compact form through `dict` (the tracer's that the writer used), anything
// else (or a form that does not parse) returned as is.
std::string as_json(std::string_view stored, const AttrDict* dict = nullptr);

// A finite double as JavaScript's Number#toString (JSON.stringify) writes it.
void append_js_number(std::string& out, double v);

}  // namespace hotspan::attr_slots
