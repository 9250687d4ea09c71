#include "export/otlp_otel_fields.h"

#include <charconv>
#include <cstring>

namespace hotspan {
namespace {

class FnVisitor final : public AttrMemberVisitor {
 public:
  explicit FnVisitor(const std::function<void(std::string_view, const AttrValue&)>& f) : f_(f) {}
  void member(std::string_view key, const AttrValue& v) override { f_(key, v); }

 private:
  const std::function<void(std::string_view, const AttrValue&)>& f_;
};

bool members(const char* b, const char* e, AttrScratch& sc,
             const std::function<void(std::string_view, const AttrValue&)>& f) {
  FnVisitor v(f);
  return visit_object_members(b, e, sc, v);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool hex_bytes(std::string_view s, uint8_t* out, size_t n) {
  if (s.size() != 2 * n) return false;
  for (size_t i = 0; i < n; ++i) {
    const int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

uint32_t count_of(const AttrValue& v) {
  return v.kind == AttrValue::kInt && v.i > 0 ? static_cast<uint32_t>(std::min<int64_t>(v.i, UINT32_MAX)) : 0;
}

}  // namespace

void OtlpOtelFields::clear() {
  kind = status = 0;
  status_message.clear();
  events_b = events_e = links_b = links_e = scope_b = scope_e = nullptr;
  dropped_attributes = dropped_events = dropped_links = 0;
}

bool OtlpOtelFields::take(std::string_view key, const AttrValue& v, AttrScratch& nested) {
  // One compare for the common key that is not reserved.
  if (key.size() <= 8 || key.compare(0, 8, "hotspan.") != 0) return false;
  const std::string_view k = key.substr(8);
  const bool str = v.kind == AttrValue::kString;
  if (k == "kind") {
    static const char* const kKinds[] = {"internal", "server", "client", "producer", "consumer"};
    for (uint8_t i = 0; i < 5; ++i) {
      if (str && v.str == kKinds[i]) kind = static_cast<uint8_t>(i + 1);
    }
  } else if (k == "status") {
    if (str && v.str == "ok") status = 1;
    if (str && v.str == "error") status = 2;
  } else if (k == "status_message") {
    if (str) status_message = v.str;
  } else if (k == "events" || k == "links") {
    if (v.kind != AttrValue::kJson) return true;
    (k[0] == 'e' ? events_b : links_b) = v.json;
    (k[0] == 'e' ? events_e : links_e) = v.json + v.json_n;
  } else if (k == "dropped") {
    if (v.kind != AttrValue::kJson) return true;
    members(v.json, v.json + v.json_n, nested, [&](std::string_view n, const AttrValue& c) {
      if (n == "attributes") dropped_attributes = count_of(c);
      if (n == "events") dropped_events = count_of(c);
      if (n == "links") dropped_links = count_of(c);
    });
  } else if (k == "scope") {
    if (v.kind != AttrValue::kJson) return true;
    scope_b = v.json;
    scope_e = v.json + v.json_n;
  } else {
    return false;
  }
  return true;
}

void read_scope(const char* b, const char* e, AttrScratch& nested, std::string& name, std::string& version) {
  name.clear();
  version.clear();
  members(b, e, nested, [&](std::string_view n, const AttrValue& c) {
    if (c.kind != AttrValue::kString) return;
    if (n == "name") name = c.str;
    if (n == "version") version = c.str;
  });
}

void OtlpOtelFields::each_event(AttrScratch& nested, const std::function<void(const OtlpEventView&)>& f) const {
  if (events_b == nullptr) return;
  OtlpEventView ev;
  visit_array_elements(events_b, events_e, [&](const char* b, const char* e) {
    ev = OtlpEventView();
    const bool ok = members(b, e, nested, [&](std::string_view n, const AttrValue& c) {
      if (n == "name" && c.kind == AttrValue::kString) ev.name = c.str;
      if (n == "time_unix_nano" && c.kind == AttrValue::kString) {
        std::from_chars(c.str.data(), c.str.data() + c.str.size(), ev.time_unix_nano);
      }
      if (n == "attributes" && c.kind == AttrValue::kJson) {
        ev.attrs_b = c.json;
        ev.attrs_e = c.json + c.json_n;
      }
    });
    if (ok) f(ev);
  });
}

void OtlpOtelFields::each_link(AttrScratch& nested, const std::function<void(const OtlpLinkView&)>& f) const {
  if (links_b == nullptr) return;
  OtlpLinkView link;
  visit_array_elements(links_b, links_e, [&](const char* b, const char* e) {
    link = OtlpLinkView();
    bool ids = true;
    const bool ok = members(b, e, nested, [&](std::string_view n, const AttrValue& c) {
      const bool str = c.kind == AttrValue::kString;
      if (n == "trace_id") ids &= str && hex_bytes(c.str, link.trace_id, 16);
      if (n == "span_id") ids &= str && hex_bytes(c.str, link.span_id, 8);
      if (n == "trace_state" && str) link.trace_state = c.str;
      if (n == "flags" && c.kind == AttrValue::kInt) link.flags = static_cast<uint32_t>(c.i);
      if (n == "attributes" && c.kind == AttrValue::kJson) {
        link.attrs_b = c.json;
        link.attrs_e = c.json + c.json_n;
      }
    });
    if (ok && ids) f(link);
  });
}

}  // namespace hotspan
