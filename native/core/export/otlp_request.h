// An OTLP ExportTraceServiceRequest (opentelemetry-proto, vendored in
// vendor/opentelemetry), encoded as protobuf or as OTLP/JSON: one resource,
// the spans added since the last request grouped by instrumentation scope
// (the resource's default scope, or a span's "hotspan.scope").
//
// A span's fields: trace_id, span_id, parent_span_id (absent for a root),
// flags (the W3C trace flags; whether a parent is remote is not known, so
// its bits stay clear), name, kind (INTERNAL unless given), start
// and end in ns since the Unix epoch (a record's CLOCK_MONOTONIC ns plus the
// writer's realtime - monotonic offset, read once so every request of one
// exporter is on one axis), attributes typed as attr_members.h reads them
// (nested values and null as their JSON text in a string), status ERROR for
// a span flagged error, "hotspan.abandoned" = true for one ended by cleanup.
// The reserved OTel keys (otlp_otel_fields.h) become kind, status, events,
// links, dropped counts and the scope, not attributes.
// Strings must be valid UTF-8 (the caller repairs names; attribute text is
// repaired here).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "read/attr_members.h"
#include "export/otlp_otel_fields.h"
#include "record/span_record.h"

namespace hotspan {

// The ids of one span, as W3C Trace Context writes them (big-endian bytes).
struct OtlpSpanIds {
  uint8_t trace_id[16] = {};
  uint64_t span_id = 0;
  uint64_t parent_span_id = 0;  // 0: a root
  uint8_t trace_flags = 1;      // W3C flags (sampled)
  // The W3C tracestate its trace carries (a remote parent's), or null.
  const std::string* trace_state = nullptr;
};

struct OtlpResource {
  // Resource attributes in order (service.name among them), string valued.
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string scope_name = "hotspan";
  std::string scope_version;
};

enum class OtlpEncoding : uint8_t { kProtobuf = 0, kJson = 1 };

// SpanKind (trace.proto).
enum class OtlpSpanKind : uint8_t { kUnspecified = 0, kInternal = 1, kServer = 2, kClient = 3, kProducer = 4, kConsumer = 5 };

struct OtlpSpan {
  const SpanRecord* record = nullptr;
  const std::string* name = nullptr;   // valid UTF-8
  const std::string* attrs = nullptr;  // the record's attribute object text, or null
  OtlpSpanIds ids;
  OtlpSpanKind kind = OtlpSpanKind::kInternal;
};

// Where a span's attributes go (one encoding's KeyValue writer).
class OtlpAttrSink : public AttrMemberVisitor {
 public:
  // Removes the members written since the span's attributes began.
  virtual void rollback() = 0;

 protected:
  ~OtlpAttrSink() = default;
};

class OtlpRequestWriter {
 public:
  // unix_offset_ns: CLOCK_REALTIME - CLOCK_MONOTONIC, added to records' times.
  OtlpRequestWriter(const OtlpResource& resource, OtlpEncoding encoding, int64_t unix_offset_ns);

  void add(const OtlpSpan& span);
  size_t spans() const { return count_; }
  // Bytes of the spans added so far (the request is a few bytes more).
  size_t bytes() const {
    size_t n = 0;
    for (const Scope& s : scopes_) n += s.spans.size();
    return n;
  }
  // The whole request into `out` (replacing it); the writer is empty again.
  void finish(std::string& out);

 private:
  // The span's attribute members, then "hotspan.abandoned" when flagged;
  // text that is not one object becomes one string "attrs".
  // Reserved OTel keys go to otel_ instead.
  void span_attrs(const OtlpSpan& span, OtlpAttrSink& sink);
  // After a span is written to scopes_[0].spans from `at`: moves it to its
  // scope's buffer when it names one.
  void place(size_t at);
  // The index in scopes_ of the scope whose hotspan.scope text is [b, e)
  // (added when new).
  size_t scope_index(const char* b, const char* e);
  uint8_t status_code(const SpanRecord& r) const {
    return (r.flags & kFlagError) != 0 ? 2 : otel_.status;
  }
  void add_proto(const OtlpSpan& span);
  void add_json(const OtlpSpan& span);
  void finish_proto(std::string& out);
  void finish_json(std::string& out);

  OtlpResource resource_;
  OtlpEncoding encoding_;
  int64_t unix_offset_ns_;
  struct Scope {
    std::string name, version;
    std::string spans;  // encoded spans
    std::string text;   // the hotspan.scope text that named it last (its cache key)
  };
  std::vector<Scope> scopes_;  // [0]: the default scope
  size_t count_ = 0;
  AttrScratch scratch_, nested_;
  OtlpOtelFields otel_;
  std::string scope_name_, scope_version_;  // read_scope's scratch
};

}  // namespace hotspan
