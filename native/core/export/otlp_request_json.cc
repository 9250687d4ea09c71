// OTLP/JSON (the protobuf JSON mapping with the OTLP exceptions): ids as
// lowercase hex, 64-bit integers (times, intValue) as decimal strings, enums
// as integers, field names in lowerCamelCase.
#include <charconv>
#include <cmath>

#include "record/json_text.h"
#include "export/otlp_request.h"

namespace hotspan {
namespace {

void put_hex(std::string& out, const uint8_t* p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[p[i] >> 4]);
    out.push_back(kHex[p[i] & 15]);
  }
}

void put_hex64(std::string& out, uint64_t v) {
  uint8_t b[8];
  for (int i = 7; i >= 0; --i) {
    b[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
  put_hex(out, b, 8);
}

template <typename T>
void put_number(std::string& out, T v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

void put_string(std::string& out, const char* s, size_t n) {
  out.push_back('"');
  json_text::append_escaped(out, s, n);
  out.push_back('"');
}
void put_string(std::string& out, std::string_view s) { put_string(out, s.data(), s.size()); }

void put_attribute(std::string& out, std::string_view key, const AttrValue& v) {
  out += "{\"key\":";
  put_string(out, key);
  out += ",\"value\":{";
  switch (v.kind) {
    case AttrValue::kString:
      out += "\"stringValue\":";
      put_string(out, v.str);
      break;
    case AttrValue::kBool:
      out += v.b ? "\"boolValue\":true" : "\"boolValue\":false";
      break;
    case AttrValue::kInt:
      out += "\"intValue\":\"";
      put_number(out, v.i);
      out.push_back('"');
      break;
    case AttrValue::kDouble:
      out += "\"doubleValue\":";
      if (std::isfinite(v.d)) {
        put_number(out, v.d);
      } else {
        out += v.d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
      }
      break;
    case AttrValue::kJson:
      out += "\"stringValue\":";
      put_string(out, v.json, v.json_n);
      break;
  }
  out += "}}";
}

class JsonAttrs final : public OtlpAttrSink {
 public:
  explicit JsonAttrs(std::string& out) : out_(out), start_(out.size()) {}
  void rollback() override {
    out_.resize(start_);
    any_ = false;
  }
  void member(std::string_view key, const AttrValue& v) override {
    if (any_) out_.push_back(',');
    any_ = true;
    put_attribute(out_, key, v);
  }

 private:
  std::string& out_;
  size_t start_;
  bool any_ = false;
};

// `key` (",\"events\":[") and its elements, each after its separator.
class JsonList {
 public:
  JsonList(std::string& out, const char* key) : out_(out) { out_ += key; }
  ~JsonList() { out_.push_back(']'); }
  JsonList(const JsonList&) = delete;
  JsonList& operator=(const JsonList&) = delete;
  std::string& next() {
    if (!first_) out_.push_back(',');
    first_ = false;
    return out_;
  }

 private:
  std::string& out_;
  bool first_ = true;
};

// A nested attribute object as a JSON KeyValue array ("attributes":[...]).
void put_nested_attrs(std::string& out, const char* b, const char* e, AttrScratch& sc) {
  out += ",\"attributes\":[";
  if (b != nullptr) {
    JsonAttrs sink(out);
    if (!visit_object_members(b, e, sc, sink)) sink.rollback();
  }
  out.push_back(']');
}

}  // namespace

void OtlpRequestWriter::add_json(const OtlpSpan& span) {
  std::string& out = scopes_[0].spans;
  const size_t at = out.size();
  const SpanRecord& r = *span.record;
  if (!out.empty()) out.push_back(',');
  out += "{\"traceId\":\"";
  put_hex(out, span.ids.trace_id, 16);
  out += "\",\"spanId\":\"";
  put_hex64(out, span.ids.span_id);
  out.push_back('"');
  if (span.ids.trace_state != nullptr && !span.ids.trace_state->empty()) {
    out += ",\"traceState\":";
    put_string(out, *span.ids.trace_state);
  }
  if (span.ids.parent_span_id != 0) {
    out += ",\"parentSpanId\":\"";
    put_hex64(out, span.ids.parent_span_id);
    out.push_back('"');
  }
  out += ",\"flags\":";
  put_number(out, uint32_t{span.ids.trace_flags});
  out += ",\"name\":";
  put_string(out, *span.name);
  out += ",\"startTimeUnixNano\":\"";
  put_number(out, static_cast<uint64_t>(r.start_ns + unix_offset_ns_));
  out += "\",\"endTimeUnixNano\":\"";
  put_number(out, static_cast<uint64_t>(r.end_ns + unix_offset_ns_));
  out += "\",\"attributes\":[";
  JsonAttrs attrs(out);
  span_attrs(span, attrs);
  out += "]";
  out += ",\"kind\":";
  put_number(out, static_cast<unsigned>(otel_.kind != 0 ? otel_.kind : static_cast<uint8_t>(span.kind)));
  const auto count = [&](const char* field, uint32_t n) {
    if (n == 0) return;
    out += field;
    put_number(out, n);
  };
  count(",\"droppedAttributesCount\":", otel_.dropped_attributes);
  if (otel_.events_b != nullptr) {
    JsonList list(out, ",\"events\":[");
    otel_.each_event(nested_, [&](const OtlpEventView& ev) {
      list.next() += "{\"timeUnixNano\":\"";
      put_number(out, ev.time_unix_nano);
      out += "\",\"name\":";
      put_string(out, ev.name);
      put_nested_attrs(out, ev.attrs_b, ev.attrs_e, scratch_);
      out.push_back('}');
    });
  }
  count(",\"droppedEventsCount\":", otel_.dropped_events);
  if (otel_.links_b != nullptr) {
    JsonList list(out, ",\"links\":[");
    otel_.each_link(nested_, [&](const OtlpLinkView& link) {
      list.next() += "{\"traceId\":\"";
      put_hex(out, link.trace_id, 16);
      out += "\",\"spanId\":\"";
      put_hex(out, link.span_id, 8);
      out += "\",\"traceState\":";
      put_string(out, link.trace_state);
      out += ",\"flags\":";
      put_number(out, link.flags);
      put_nested_attrs(out, link.attrs_b, link.attrs_e, scratch_);
      out.push_back('}');
    });
  }
  count(",\"droppedLinksCount\":", otel_.dropped_links);
  const uint8_t code = status_code(r);
  if (code != 0 || !otel_.status_message.empty()) {
    out += ",\"status\":{\"code\":";
    put_number(out, unsigned{code});
    if (!otel_.status_message.empty()) {
      out += ",\"message\":";
      put_string(out, otel_.status_message);
    }
    out.push_back('}');
  }
  out += "}";
  place(at);
}

void OtlpRequestWriter::finish_json(std::string& out) {
  out.reserve(bytes() + 256);
  out += "{\"resourceSpans\":[{\"resource\":{\"attributes\":[";
  bool first = true;
  for (const auto& kv : resource_.attributes) {
    if (!first) out.push_back(',');
    first = false;
    AttrValue v;
    v.kind = AttrValue::kString;
    v.str = kv.second;
    put_attribute(out, kv.first, v);
  }
  out += "]},\"scopeSpans\":[";
  bool first_scope = true;
  for (const Scope& sc : scopes_) {
    if (sc.spans.empty()) continue;
    if (!first_scope) out.push_back(',');
    first_scope = false;
    out += "{\"scope\":{\"name\":";
    put_string(out, sc.name);
    if (!sc.version.empty()) {
      out += ",\"version\":";
      put_string(out, sc.version);
    }
    out += "},\"spans\":[";
    out += sc.spans;
    out += "]}";
  }
  out += "]}]}";
}

// The encoding choice: the protobuf half (otlp_request.cc) calls nothing here.
void OtlpRequestWriter::add(const OtlpSpan& span) {
  if (encoding_ == OtlpEncoding::kJson) {
    add_json(span);
  } else {
    add_proto(span);
  }
  ++count_;
}

void OtlpRequestWriter::finish(std::string& out) {
  out.clear();
  if (encoding_ == OtlpEncoding::kJson) {
    finish_json(out);
  } else {
    finish_proto(out);
  }
  scopes_.resize(1);
  scopes_[0].spans.clear();
  count_ = 0;
}

}  // namespace hotspan
