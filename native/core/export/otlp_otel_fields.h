// The OTel-only data the hotspan/otel provider stores under reserved
// "hotspan.*" attribute keys (coord: kind, status, status_message, events,
// links, dropped, scope), read out of a span's attribute members so the
// OTLP encoder writes them as Span fields and leaves them out of attributes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "read/attr_members.h"

namespace hotspan {

struct OtlpEventView {
  std::string name;
  uint64_t time_unix_nano = 0;
  const char* attrs_b = nullptr;  // its attribute object text, or null
  const char* attrs_e = nullptr;
};

struct OtlpLinkView {
  uint8_t trace_id[16] = {};
  uint8_t span_id[8] = {};
  std::string trace_state;
  uint32_t flags = 0;
  const char* attrs_b = nullptr;
  const char* attrs_e = nullptr;
};

struct OtlpOtelFields {
  uint8_t kind = 0;    // SpanKind; 0: not given
  uint8_t status = 0;  // StatusCode: 0 unset, 1 ok, 2 error
  std::string status_message;
  const char* events_b = nullptr;  // array texts, valid while the span's attribute text is
  const char* events_e = nullptr;
  const char* links_b = nullptr;
  const char* links_e = nullptr;
  uint32_t dropped_attributes = 0, dropped_events = 0, dropped_links = 0;
  // The hotspan.scope object's text as written (null: none), read by
  // read_scope: the writer keys its scopes by this text, so a scope
  // repeated span after span is compared, not parsed.
  const char* scope_b = nullptr;
  const char* scope_e = nullptr;

  // Empty again (keeps status_message's buffer).
  void clear();
  // Takes `key` when it is one of the reserved keys (true), else false.
  bool take(std::string_view key, const AttrValue& v, AttrScratch& nested);
  // Each well-formed element of hotspan.events / hotspan.links.
  void each_event(AttrScratch& nested, const std::function<void(const OtlpEventView&)>& f) const;
  void each_link(AttrScratch& nested, const std::function<void(const OtlpLinkView&)>& f) const;
};

// The name and version members of a hotspan.scope object's text [b, e)
// (each "" when absent or not a string).
void read_scope(const char* b, const char* e, AttrScratch& nested, std::string& name, std::string& version);

}  // namespace hotspan
