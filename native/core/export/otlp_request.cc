// OTLP protobuf: the spans are encoded as they are added (each a
// ScopeSpans.spans field), and finish() writes the envelope around them
// (ExportTraceServiceRequest.resource_spans > ResourceSpans {resource,
// scope_spans > ScopeSpans {scope, spans...}}), whose lengths are then known.
#include "export/otlp_request.h"

#include <cstring>

#include "record/json_text.h"
#include "write/proto_wire.h"

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
constexpr uint32_t kSpanTraceId = 1, kSpanSpanId = 2, kSpanTraceState = 3, kSpanParentSpanId = 4, kSpanName = 5, kSpanKind = 6,
                   kSpanStart = 7, kSpanEnd = 8, kSpanDroppedAttributes = 10, kSpanDroppedEvents = 12,
                   kSpanDroppedLinks = 14, kSpanStatus = 15, kSpanFlags = 16;
constexpr uint8_t kSpanAttribute = len_key(9), kSpanEvent = len_key(11), kSpanLink = len_key(13);
constexpr uint32_t kEventTime = 1, kEventName = 2;
constexpr uint8_t kEventAttribute = len_key(3);
constexpr uint32_t kLinkTraceId = 1, kLinkSpanId = 2, kLinkTraceState = 3, kLinkFlags = 6;
constexpr uint8_t kLinkAttribute = len_key(4);
constexpr uint32_t kStatusMessage = 2;
constexpr uint32_t kKeyValueKey = 1;
constexpr uint8_t kKeyValueValue = len_key(2);
constexpr uint32_t kAnyString = 1, kAnyBool = 2, kAnyInt = 3, kAnyDouble = 4;
constexpr uint32_t kStatusCode = 3;

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

// Each member as a KeyValue (Span.attributes, or an event's or link's).
class ProtoAttrs final : public OtlpAttrSink {
 public:
  explicit ProtoAttrs(std::string& out, uint8_t key = kSpanAttribute) : out_(out), start_(out.size()), key_(key) {}
  void rollback() override { out_.resize(start_); }
  // Sizes first, then the KeyValue in one resize: no append per field.
  void member(std::string_view key, const AttrValue& v) override {
    const bool text = v.kind == AttrValue::kString || v.kind == AttrValue::kJson;
    const char* bytes = v.kind == AttrValue::kString ? v.str.data() : v.json;
    const size_t bn = v.kind == AttrValue::kString ? v.str.size() : v.json_n;
    const uint64_t num = v.kind == AttrValue::kInt ? static_cast<uint64_t>(v.i) : v.b ? 1 : 0;
    const size_t any_n = text ? 1 + varint_size(bn) + bn : v.kind == AttrValue::kDouble ? 9 : 1 + varint_size(num);
    const size_t kv_n = 1 + varint_size(key.size()) + key.size() + 1 + varint_size(any_n) + any_n;
    const size_t at = out_.size();
    out_.resize(at + 1 + varint_size(kv_n) + kv_n);
    uint8_t* p = reinterpret_cast<uint8_t*>(&out_[at]);
    *p++ = key_;
    p = put_varint(p, kv_n);
    *p++ = kKeyValueKey << 3 | kLen;
    p = put_varint(p, key.size());
    std::memcpy(p, key.data(), key.size());
    p += key.size();
    *p++ = kKeyValueValue;
    p = put_varint(p, any_n);
    if (text) {
      *p++ = kAnyString << 3 | kLen;
      p = put_varint(p, bn);
      std::memcpy(p, bytes, bn);
    } else if (v.kind == AttrValue::kDouble) {
      *p++ = kAnyDouble << 3 | kFixed64;
      std::memcpy(p, &v.d, 8);
    } else {
      *p++ = static_cast<uint8_t>((v.kind == AttrValue::kInt ? kAnyInt : kAnyBool) << 3 | kVarint);
      put_varint(p, num);
    }
  }

 private:
  std::string& out_;
  size_t start_;
  uint8_t key_;
};

void put_fixed32(std::string& out, uint32_t field, uint32_t v) {  // field < 16: a one-byte key
  out.push_back(static_cast<char>(field << 3 | kFixed32));
  char le[4];
  std::memcpy(le, &v, 4);
  out.append(le, 4);
}

// The members of a nested attribute object as KeyValues under `key`.
void nested_attrs(std::string& out, uint8_t key, const char* b, const char* e, AttrScratch& sc) {
  if (b == nullptr) return;
  ProtoAttrs sink(out, key);
  if (!visit_object_members(b, e, sc, sink)) sink.rollback();
}

}  // namespace

OtlpRequestWriter::OtlpRequestWriter(const OtlpResource& resource, OtlpEncoding encoding, int64_t unix_offset_ns)
    : resource_(resource), encoding_(encoding), unix_offset_ns_(unix_offset_ns) {
  scopes_.push_back(Scope{resource_.scope_name, resource_.scope_version, {}, {}});
}

size_t OtlpRequestWriter::scope_index(const char* b, const char* e) {
  const std::string_view text(b, static_cast<size_t>(e - b));
  for (size_t i = 0; i < scopes_.size(); ++i) {
    if (scopes_[i].text == text) return i;
  }
  // Text not seen (or another text of a known scope): read it. Its strings
  // are valid UTF-8 already (span_attrs reads repaired text).
  read_scope(b, e, nested_, scope_name_, scope_version_);
  size_t i = 0;
  while (i < scopes_.size() && (scopes_[i].name != scope_name_ || scopes_[i].version != scope_version_)) ++i;
  if (i == scopes_.size()) scopes_.push_back(Scope{scope_name_, scope_version_, {}, {}});
  scopes_[i].text.assign(text);
  return i;
}

void OtlpRequestWriter::place(size_t at) {
  if (otel_.scope_b == nullptr) return;
  const size_t i = scope_index(otel_.scope_b, otel_.scope_e);
  if (i == 0) return;
  std::string& from = scopes_[0].spans;
  std::string& to = scopes_[i].spans;
  // OTLP/JSON: a span after another starts with its ',' separator.
  const bool comma = encoding_ == OtlpEncoding::kJson && at < from.size() && from[at] == ',';
  if (encoding_ == OtlpEncoding::kJson && !to.empty()) to.push_back(',');
  to.append(from, at + (comma ? 1 : 0), std::string::npos);
  from.resize(at);
}

void OtlpRequestWriter::span_attrs(const OtlpSpan& span, OtlpAttrSink& sink) {
  otel_.clear();
  if (span.attrs != nullptr) {
    const char* b = nullptr;
    const char* e = nullptr;
    // One pass: each member is a reserved key (one compare rules most out) or a KeyValue.
    class Split final : public AttrMemberVisitor {
     public:
      Split(OtlpAttrSink& sink, OtlpOtelFields& otel, AttrScratch& nested) : sink_(sink), otel_(otel), nested_(nested) {}
      void member(std::string_view key, const AttrValue& v) override {
        if (!otel_.take(key, v, nested_)) sink_.member(key, v);
      }

     private:
      OtlpAttrSink& sink_;
      OtlpOtelFields& otel_;
      AttrScratch& nested_;
    };
    Split split(sink, otel_, nested_);
    if (!visit_attr_members(*span.attrs, scratch_, split, &b, &e)) {
      otel_.clear();
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

void OtlpRequestWriter::add_proto(const OtlpSpan& span) {
  std::string& out = scopes_[0].spans;
  const size_t at = out.size();
  const SpanRecord& r = *span.record;
  const size_t body = open_len(out, kScopeSpansSpan);
  put_key_bytes(out, kSpanTraceId, reinterpret_cast<const char*>(span.ids.trace_id), 16);
  uint8_t id[8];
  put_be64(id, span.ids.span_id);
  put_key_bytes(out, kSpanSpanId, reinterpret_cast<const char*>(id), 8);
  if (span.ids.trace_state != nullptr && !span.ids.trace_state->empty()) {
    const std::string ts = json_text::sanitized(*span.ids.trace_state);
    put_key_bytes(out, kSpanTraceState, ts.data(), ts.size());
  }
  if (span.ids.parent_span_id != 0) {
    put_be64(id, span.ids.parent_span_id);
    put_key_bytes(out, kSpanParentSpanId, reinterpret_cast<const char*>(id), 8);
  }
  put_key_bytes(out, kSpanName, span.name->data(), span.name->size());
  put_fixed64(out, kSpanStart, static_cast<uint64_t>(r.start_ns + unix_offset_ns_));
  put_fixed64(out, kSpanEnd, static_cast<uint64_t>(r.end_ns + unix_offset_ns_));
  ProtoAttrs attrs(out);
  span_attrs(span, attrs);
  const uint8_t kind = otel_.kind != 0 ? otel_.kind : static_cast<uint8_t>(span.kind);
  if (kind != 0) put_key_varint(out, kSpanKind, kind);
  if (otel_.dropped_attributes != 0) put_key_varint(out, kSpanDroppedAttributes, otel_.dropped_attributes);
  otel_.each_event(nested_, [&](const OtlpEventView& ev) {
    const size_t m = open_len(out, kSpanEvent);
    put_fixed64(out, kEventTime, ev.time_unix_nano);
    put_key_bytes(out, kEventName, ev.name.data(), ev.name.size());  // valid UTF-8: read from repaired text
    nested_attrs(out, kEventAttribute, ev.attrs_b, ev.attrs_e, scratch_);
    close_len(out, m);
  });
  if (otel_.dropped_events != 0) put_key_varint(out, kSpanDroppedEvents, otel_.dropped_events);
  otel_.each_link(nested_, [&](const OtlpLinkView& link) {
    const size_t m = open_len(out, kSpanLink);
    put_key_bytes(out, kLinkTraceId, reinterpret_cast<const char*>(link.trace_id), 16);
    put_key_bytes(out, kLinkSpanId, reinterpret_cast<const char*>(link.span_id), 8);
    if (!link.trace_state.empty()) put_key_bytes(out, kLinkTraceState, link.trace_state.data(), link.trace_state.size());
    nested_attrs(out, kLinkAttribute, link.attrs_b, link.attrs_e, scratch_);
    put_fixed32(out, kLinkFlags, link.flags);
    close_len(out, m);
  });
  if (otel_.dropped_links != 0) put_key_varint(out, kSpanDroppedLinks, otel_.dropped_links);
  if (const uint8_t code = status_code(r); code != 0 || !otel_.status_message.empty()) {
    const size_t status = open_len(out, len_key(kSpanStatus));
    if (!otel_.status_message.empty()) {
      put_key_bytes(out, kStatusMessage, otel_.status_message.data(), otel_.status_message.size());
    }
    if (code != 0) put_key_varint(out, kStatusCode, code);
    close_len(out, status);
  }
  const uint32_t flags = span.ids.trace_flags;
  out.push_back(static_cast<char>(kSpanFlags << 3 | kFixed32));
  out.push_back(static_cast<char>(0x01));  // kSpanFlags = 16: a two-byte key
  char le[4];
  std::memcpy(le, &flags, 4);
  out.append(le, 4);
  close_len(out, body);
  place(at);
}

void OtlpRequestWriter::finish_proto(std::string& out) {
  Message resource;
  for (const auto& kv : resource_.attributes) resource.msg(kResourceAttributes, string_attribute(kv.first, kv.second));
  Message rs_head;
  rs_head.msg(kResourceSpansResource, resource);
  // Each scope's head (ScopeSpans key, length, scope) before its spans.
  std::vector<std::string> heads;
  size_t rs_n = rs_head.s.size();
  for (const Scope& sc : scopes_) {
    if (sc.spans.empty()) continue;
    Message scope;
    scope.str(kScopeName, json_text::sanitized(sc.name));
    if (!sc.version.empty()) scope.str(kScopeVersion, json_text::sanitized(sc.version));
    Message scope_head;
    scope_head.msg(kScopeSpansScope, scope);
    std::string head;
    put_key_len(head, kResourceSpansScopeSpans, scope_head.s.size() + sc.spans.size());
    head += scope_head.s;
    rs_n += head.size() + sc.spans.size();
    heads.push_back(std::move(head));
  }
  out.reserve(rs_n + 16);
  put_key_len(out, kRequestResourceSpans, rs_n);
  out += rs_head.s;
  size_t h = 0;
  for (const Scope& sc : scopes_) {
    if (sc.spans.empty()) continue;
    out += heads[h++];
    out += sc.spans;
  }
}

}  // namespace hotspan
