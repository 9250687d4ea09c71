// Span attributes in the form the addon's fast path stores them: typed
// slots in one byte string (key text, then the value as given: a double,
// UTF-8 text or a boolean), no JSON on the recording path. Side tables keep
// them next to attribute JSON text (async and group spans, the C ABI); a
// slot string starts with kTag, which JSON text never does, and readers
// get JSON text from as_json() (Timeline::freeze), the one place slots
// become text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hotspan::attr_slots {

constexpr char kTag = '\x01';

// Layout after kTag, per slot: kind (kNumber, kString, kTrue, kFalse),
// u32 key length, key bytes, then a number's 8 bytes (host order) or a
// string's u32 length and bytes. The writer is the addon
// (native/addon/slot_calls.cc), which keeps keys and repeated values in
// this encoding, so a slot is a copy.
enum Kind : char { kNumber = 'n', kString = 's', kTrue = 't', kFalse = 'f' };

inline bool is_slots(std::string_view s) { return !s.empty() && s[0] == kTag; }

// JSON object text of `stored`: slots rendered (numbers as JavaScript's
// Number#toString writes them, so both backends show the same text),
// anything else returned as is.
std::string as_json(std::string_view stored);

// A finite double as JavaScript's Number#toString (JSON.stringify) writes it.
void append_js_number(std::string& out, double v);

}  // namespace hotspan::attr_slots
