// OTLP protobuf: the spans are encoded as they are added (each a
// ScopeSpans.spans field), and finish() writes the envelope around them
// (ExportTraceServiceRequest.resource_spans > ResourceSpans {resource,
// scope_spans > ScopeSpans {scope, spans...}}), whose lengths are then known.
#include "otlp_request.h"

#include <cstring>

#include "json_text.h"
#include "proto_wire.h"

namespace hotspan {
namespace {

using namespace proto_wire;

// Field numbers (trace.proto, common.proto, resource.proto).
constexpr uint32_t kRequestResourceSpans = 1;
constexpr uint32_t kResourceSpansResource = 1, kResourceSpansScopeSpans = 2;
constexpr uint32_t kResourceAttributes = 1;
constexpr uint32_t kScopeSpansScope = 1;
constexpr uint8_t kScopeSpansSpan = len_key(2);
constexpr uint32_t kScopeName = 1, kScopeVersion = 2;
constexpr uint32_t kSpanTraceId = 1, kSpanSpanId = 2, kSpanParentSpanId = 4, kSpanName = 5, kSpanKind = 6,
                   kSpanStart = 7, kSpanEnd = 8, kSpanStatus = 15, kSpanFlags = 16;
constexpr uint8_t kSpanAttribute = len_key(9);
constexpr uint32_t kKeyValueKey = 1;
constexpr uint8_t kKeyValueValue = len_key(2);
constexpr uint32_t kAnyString = 1, kAnyBool = 2, kAnyInt = 3, kAnyDouble = 4;
constexpr uint32_t kStatusCode = 3;
constexpr uint32_t kStatusError = 2;

void put_be64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

void put_fixed64(std::string& out, uint32_t field, uint64_t v) { put_key_fixed64(out, field, &v); }

Message string_attribute(const std::string& key, const std::string& value) {
  Message any;
  any.str(kAnyString, json_text::sanitized(value));
  Message kv;
  kv.str(kKeyValueKey, json_text::sanitized(key));
  kv.msg(2, any);
  return kv;
}

// Each member as a Span.attributes KeyValue.
class ProtoAttrs final : public OtlpAttrSink {
 public:
  explicit ProtoAttrs(std::string& out) : out_(out), start_(out.size()) {}
  void rollback() override { out_.resize(start_); }
  void member(const std::string& key, const AttrValue& v) override {
    const size_t kv = open_len(out_, kSpanAttribute);
    put_key_bytes(out_, kKeyValueKey, key.data(), key.size());
    const size_t any = open_len(out_, kKeyValueValue);
    switch (v.kind) {
      case AttrValue::kString:
        put_key_bytes(out_, kAnyString, v.str->data(), v.str->size());
        break;
      case AttrValue::kBool:
        put_key_varint(out_, kAnyBool, v.b ? 1 : 0);
        break;
      case AttrValue::kInt:
        put_key_varint(out_, kAnyInt, static_cast<uint64_t>(v.i));
        break;
      case AttrValue::kDouble:
        put_key_fixed64(out_, kAnyDouble, &v.d);
        break;
      case AttrValue::kJson:
        put_key_bytes(out_, kAnyString, v.json, v.json_n);
        break;
    }
    close_len(out_, any);
    close_len(out_, kv);
  }

 private:
  std::string& out_;
  size_t start_;
};

}  // namespace

OtlpRequestWriter::OtlpRequestWriter(const OtlpResource& resource, OtlpEncoding encoding, int64_t unix_offset_ns)
    : resource_(resource), encoding_(encoding), unix_offset_ns_(unix_offset_ns) {}

void OtlpRequestWriter::add(const OtlpSpan& span) {
  if (encoding_ == OtlpEncoding::kJson) {
    add_json(span);
  } else {
    add_proto(span);
  }
  ++count_;
}

void OtlpRequestWriter::span_attrs(const OtlpSpan& span, OtlpAttrSink& sink) {
  if (span.attrs != nullptr) {
    const char* b = nullptr;
    const char* e = nullptr;
    if (!visit_attr_members(*span.attrs, scratch_, sink, &b, &e)) {
      sink.rollback();
      AttrValue whole;
      whole.kind = AttrValue::kJson;
      whole.json = b;
      whole.json_n = static_cast<size_t>(e - b);
      sink.member("attrs", whole);
    }
  }
  if ((span.record->flags & kFlagAbandoned) != 0) {
    AttrValue t;
    t.kind = AttrValue::kBool;
    t.b = true;
    sink.member("hotspan.abandoned", t);
  }
}

void OtlpRequestWriter::finish(std::string& out) {
  out.clear();
  if (encoding_ == OtlpEncoding::kJson) {
    finish_json(out);
  } else {
    finish_proto(out);
  }
  spans_.clear();
  count_ = 0;
}

void OtlpRequestWriter::add_proto(const OtlpSpan& span) {
  std::string& out = spans_;
  const SpanRecord& r = *span.record;
  const size_t body = open_len(out, kScopeSpansSpan);
  put_key_bytes(out, kSpanTraceId, reinterpret_cast<const char*>(span.ids.trace_id), 16);
  uint8_t id[8];
  put_be64(id, span.ids.span_id);
  put_key_bytes(out, kSpanSpanId, reinterpret_cast<const char*>(id), 8);
  if (span.ids.parent_span_id != 0) {
    put_be64(id, span.ids.parent_span_id);
    put_key_bytes(out, kSpanParentSpanId, reinterpret_cast<const char*>(id), 8);
  }
  put_key_bytes(out, kSpanName, span.name->data(), span.name->size());
  if (span.kind != OtlpSpanKind::kUnspecified) put_key_varint(out, kSpanKind, static_cast<uint64_t>(span.kind));
  put_fixed64(out, kSpanStart, static_cast<uint64_t>(r.start_ns + unix_offset_ns_));
  put_fixed64(out, kSpanEnd, static_cast<uint64_t>(r.end_ns + unix_offset_ns_));
  ProtoAttrs attrs(out);
  span_attrs(span, attrs);
  if ((r.flags & kFlagError) != 0) {
    put_key_len(out, kSpanStatus, 2);
    out.push_back(static_cast<char>(kStatusCode << 3));
    out.push_back(static_cast<char>(kStatusError));
  }
  const uint32_t flags = span.ids.trace_flags;
  out.push_back(static_cast<char>(kSpanFlags << 3 | kFixed32));
  out.push_back(static_cast<char>(0x01));  // kSpanFlags = 16: a two-byte key
  char le[4];
  std::memcpy(le, &flags, 4);
  out.append(le, 4);
  close_len(out, body);
}

void OtlpRequestWriter::finish_proto(std::string& out) {
  Message resource;
  for (const auto& kv : resource_.attributes) resource.msg(kResourceAttributes, string_attribute(kv.first, kv.second));
  Message scope;
  scope.str(kScopeName, json_text::sanitized(resource_.scope_name));
  if (!resource_.scope_version.empty()) scope.str(kScopeVersion, json_text::sanitized(resource_.scope_version));
  Message scope_head;
  scope_head.msg(kScopeSpansScope, scope);
  const size_t scope_spans_n = scope_head.s.size() + spans_.size();
  Message rs_head;
  rs_head.msg(kResourceSpansResource, resource);
  put_key_len(rs_head.s, kResourceSpansScopeSpans, scope_spans_n);
  const size_t rs_n = rs_head.s.size() + scope_spans_n;
  out.reserve(rs_n + 16);
  put_key_len(out, kRequestResourceSpans, rs_n);
  out += rs_head.s;
  out += scope_head.s;
  out += spans_;
}

}  // namespace hotspan
