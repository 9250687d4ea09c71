// OtlpSource / OtlpRequestWriter: requests decoded by protoc with the
// vendored upstream schema (not by our own reader), lost records counted,
// trees waiting for their root, OTLP/JSON well-formed.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>
#include <unistd.h>

#include "check.h"
#include "record/chunk_pool.h"
#include "record/json_text.h"
#include "export/otlp_source.h"
#include "record/sampler.h"
#include "record/span_ids.h"
#include "record/tail_keep.h"
#include "record/thread_state.h"
#include "record/tracer.h"

using namespace hotspan;

namespace {

const std::string kRepo = std::string(__FILE__).substr(0, std::string(__FILE__).rfind("/native/test/"));

// protoc --decode's text form of the request; "" when protoc fails.
std::string protoc_decode(const std::string& body) {
  const std::string in = "/tmp/hotspan_otlp_test_" + std::to_string(::getpid()) + ".bin";
  std::ofstream(in, std::ios::binary) << body;
  const std::string cmd = "protoc --decode=opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest -I " +
                          kRepo + "/vendor/opentelemetry " + kRepo +
                          "/vendor/opentelemetry/opentelemetry/proto/collector/trace/v1/trace_service.proto < " + in;
  std::string text;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  const int rc = pclose(p);
  std::remove(in.c_str());
  return rc == 0 ? text : "";
}

// An 8-byte id as protoc prints bytes (C escapes, octal for the rest).
std::string protoc_bytes(uint64_t v, std::string s = "") {
  for (int i = 7; i >= 0; --i) {
    const auto c = static_cast<unsigned char>(v >> (8 * i));
    if (c == '\n') s += "\\n";
    else if (c == '\r') s += "\\r";
    else if (c == '\t') s += "\\t";
    else if (c == '"') s += "\\\"";
    else if (c == '\'') s += "\\'";
    else if (c == '\\') s += "\\\\";
    else if (c >= 0x20 && c < 0x7f) s += static_cast<char>(c);
    else {
      char o[5];
      std::snprintf(o, sizeof o, "\\%03o", c);
      s += o;
    }
  }
  return s;
}

bool has(const std::string& text, const std::string& needle) {
  const bool ok = text.find(needle) != std::string::npos;
  if (!ok) std::fprintf(stderr, "missing: %s\n", needle.c_str());
  return ok;
}

OtlpResource resource() {
  OtlpResource r;
  r.attributes = {{"service.name", "checkout"}, {"deployment.environment", "test"}};
  r.scope_version = "0.1.0";
  return r;
}

constexpr int64_t kOffset = 1700000000000000000;  // realtime - monotonic

void protobuf_request_decodes_with_the_upstream_schema() {
  auto t = Tracer::create();
  auto main = t->attach_js_thread("main");
  const uint32_t req = t->intern("req"), db = t->intern("db"), fail = t->intern("fail"), io = t->intern("io");
  CHECK_EQ(begin(*main, req, 1000), Status::kOk);
  CHECK_EQ(begin_with_attrs(*main, db, 1100,
                            R"({"rows":3,"q":"select","ok":true,"ratio":0.5,"nested":[1,{"a":null}]})"),
           Status::kOk);
  CHECK_EQ(end(*main, 2000), Status::kOk);
  CHECK_EQ(begin(*main, fail, 2100), Status::kOk);
  CHECK_EQ(end(*main, 2200, kFlagError), Status::kOk);
  CHECK_EQ(end(*main, 5000), Status::kOk);
  const uint32_t tl = timeline_id(*main);
  const uint32_t track = t->track("net", false);
  const uint64_t token = t->async_begin(track, io, 3000, {}, make_span_id(tl, 1));
  CHECK(t->async_end(token, 4000) == Status::kOk);
  t->flush();

  auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, kOffset);
  OtlpSource& src = *src_p;
  std::string body;
  const OtlpSource::Batch b = src.next(100, false, body);
  CHECK_EQ(b.spans, size_t{4});
  CHECK_EQ(b.lost, uint64_t{0});
  const std::string text = protoc_decode(body);
  CHECK(!text.empty());
  CHECK(has(text, "key: \"service.name\"\n      value {\n        string_value: \"checkout\""));
  CHECK(has(text, "scope {\n      name: \"hotspan\"\n      version: \"0.1.0\""));
  CHECK(has(text, "name: \"db\""));
  CHECK(has(text, "int_value: 3"));
  CHECK(has(text, "string_value: \"select\""));
  CHECK(has(text, "bool_value: true"));
  CHECK(has(text, "double_value: 0.5"));
  CHECK(has(text, "string_value: \"[1,{\\\"a\\\":null}]\""));
  CHECK(has(text, "code: STATUS_CODE_ERROR"));
  CHECK(has(text, "kind: SPAN_KIND_INTERNAL"));
  CHECK(has(text, "start_time_unix_nano: " + std::to_string(kOffset + 1100)));
  CHECK(has(text, "end_time_unix_nano: " + std::to_string(kOffset + 5000)));
  // Ids: the children and the track span name the root's span id as parent.
  const std::string root_id = protoc_bytes(trace_id::wire_span_id(t->id_salt(), make_span_id(tl, 1)));
  CHECK(has(text, "span_id: \"" + root_id + "\""));
  size_t parents = 0;
  for (size_t at = 0; (at = text.find("parent_span_id: \"" + root_id + "\"", at)) != std::string::npos; ++at) ++parents;
  CHECK_EQ(parents, size_t{3});
  // Nothing new: no request.
  std::string again = "untouched";
  CHECK_EQ(src.next(100, false, again).spans, size_t{0});
  CHECK_EQ(again, std::string("untouched"));
}

std::string protoc_trace(const TraceId& t) { return protoc_bytes(t.lo, protoc_bytes(t.hi)); }

// The ids the context core resolves over the whole snapshot, by tracer-wide span id.
std::map<uint64_t, SpanIds> oracle(const Tracer& t) {
  const FrozenSnapshot snap = t.freeze();
  std::vector<std::vector<SpanIds>> ids;
  resolve_span_ids(snap, t.id_salt(), ids);
  std::map<uint64_t, SpanIds> out;
  for (size_t i = 0; i < snap.timelines.size(); ++i) {
    for (uint32_t k = 0; k < snap.timelines[i].records.size(); ++k) {
      out[make_span_id(snap.timelines[i].id, snap.timelines[i].records[k].local_id)] = ids[i][k];
    }
  }
  return out;
}

std::shared_ptr<Tracer> smallest_budget(FullPolicy policy) {
  TracerOptions o;
  o.memory_limit = ChunkPool::kMinLimit;
  o.on_full = policy;
  return Tracer::create(o);
}

// The i-th of a run of root spans, 10 ns apart.
void flat_span(ThreadState& th, uint32_t name, uint64_t i) {
  CHECK_EQ(begin(th, name, static_cast<int64_t>(10 * i)), Status::kOk);
  CHECK_EQ(end(th, static_cast<int64_t>(10 * i + 5)), Status::kOk);
}

// A tracer with its main thread, one name, an async track and a protobuf source.
struct AsyncTreeFixture {
  std::shared_ptr<Tracer> t = Tracer::create();
  std::shared_ptr<ThreadState> main = t->attach_js_thread("main");
  uint32_t n = t->intern("n");
  uint32_t tl = timeline_id(*main);
  uint32_t track = t->track("net", false);
  std::unique_ptr<OtlpSource> src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
};

void spans_across_batches_get_their_trees_trace_id() {
  AsyncTreeFixture f;
  auto& [t, main, n, tl, track, src_p] = f;
  OtlpSource& src = *src_p;
  std::string b1, b2, b3, b4;
  // An async span outlives the span it began under (sent in an earlier request).
  CHECK_EQ(begin(*main, n, 10), Status::kOk);
  const uint64_t io = t->async_begin(track, n, 11, {}, make_span_id(tl, 1));
  CHECK_EQ(end(*main, 20), Status::kOk);
  CHECK_EQ(src.next(100, false, b1).spans, size_t{1});
  CHECK(t->async_end(io, 30) == Status::kOk);
  CHECK_EQ(src.next(100, false, b2).spans, size_t{1});
  // One whose parent is still open is held until the parent comes.
  CHECK_EQ(begin(*main, n, 40), Status::kOk);
  const uint64_t io2 = t->async_begin(track, n, 41, {}, make_span_id(tl, 2));
  CHECK(t->async_end(io2, 45) == Status::kOk);
  CHECK_EQ(src.next(100, false, b3).spans, size_t{0});
  CHECK_EQ(src.waiting(), uint64_t{1});
  CHECK_EQ(end(*main, 50), Status::kOk);
  CHECK_EQ(src.next(100, false, b3).spans, size_t{2});
  CHECK_EQ(src.waiting(), uint64_t{0});
  const auto ids = oracle(*t);
  const std::string t1 = protoc_decode(b1), t2 = protoc_decode(b2), t3 = protoc_decode(b3);
  const SpanIds& root1 = ids.at(make_span_id(tl, 1));
  const SpanIds& io1 = ids.at(make_span_id(track, 1));
  CHECK(io1.trace == root1.trace);
  CHECK(has(t1, "trace_id: \"" + protoc_trace(root1.trace) + "\""));
  CHECK(has(t2, "trace_id: \"" + protoc_trace(root1.trace) + "\""));
  CHECK(has(t2, "span_id: \"" + protoc_bytes(io1.span) + "\""));
  CHECK(has(t2, "parent_span_id: \"" + protoc_bytes(root1.span) + "\""));
  const SpanIds& root2 = ids.at(make_span_id(tl, 2));
  CHECK(root2.trace != root1.trace);
  size_t count = 0;
  for (size_t at = 0; (at = t3.find("trace_id: \"" + protoc_trace(root2.trace) + "\"", at)) != std::string::npos; ++at) ++count;
  CHECK_EQ(count, size_t{2});
}

// A remote parent's tracestate is on its trace's spans: one resolved in the
// batch (the root), and an async child that ends after the root was sent
// (its trace comes from the sent-span cache); a trace of hotspan's own has none.
void tracestate_follows_the_trace_across_requests() {
  AsyncTreeFixture f;
  auto& [t, main, n, tl, track, src_p] = f;
  OtlpSource& src = *src_p;
  StoredContext remote;
  remote.trace = TraceId{0x0af7651916cd43ddull, 0x8448eb211c80319cull};
  remote.parent_wire = 0xb7ad6b7169203331ull;
  remote.flags = kTraceFlagSampled;
  remote.tracestate = "vendor=abc,other=1";
  std::string b1, b2, b3;
  CHECK_EQ(begin_in_context(*main, n, 10, {}, &remote, 0), Status::kOk);
  const uint64_t io = t->async_begin(track, n, 11, {}, make_span_id(tl, 1));
  CHECK_EQ(end(*main, 20), Status::kOk);
  CHECK_EQ(src.next(100, false, b1).spans, size_t{1});
  CHECK(t->async_end(io, 30) == Status::kOk);
  flat_span(*main, n, 5);
  CHECK_EQ(src.next(100, false, b2).spans, size_t{2});
  const std::string t1 = protoc_decode(b1), t2 = protoc_decode(b2);
  CHECK(has(t1, "trace_state: \"vendor=abc,other=1\""));
  CHECK(has(t2, "trace_state: \"vendor=abc,other=1\""));
  size_t count = 0;
  for (size_t at = 0; (at = t2.find("trace_state:", at)) != std::string::npos; ++at) ++count;
  CHECK_EQ(count, size_t{1});  // the async child's, not the flat root's
  // OTLP/JSON: the same field. A new source starts at what the tracer holds: the 3 spans, 2 of the remote trace.
  auto json_p = OtlpSource::open(t, resource(), OtlpEncoding::kJson, 0);
  CHECK_EQ(json_p->next(100, true, b3).spans, size_t{3});
  count = 0;
  for (size_t at = 0; (at = b3.find("\"traceState\":\"vendor=abc,other=1\"", at)) != std::string::npos; ++at) ++count;
  CHECK_EQ(count, size_t{2});
}

void a_tree_waits_for_its_root_unless_final() {
  auto t = Tracer::create();
  auto main = t->attach_js_thread("main");
  const uint32_t n = t->intern("n");
  CHECK_EQ(begin(*main, n, 10), Status::kOk);
  CHECK_EQ(begin(*main, n, 11), Status::kOk);
  CHECK_EQ(end(*main, 12), Status::kOk);
  t->flush();
  auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
  OtlpSource& src = *src_p;
  std::string body;
  CHECK_EQ(src.next(100, false, body).spans, size_t{0});
  CHECK_EQ(src.waiting(), uint64_t{1});
  CHECK_EQ(src.next(100, true, body).spans, size_t{1});
  CHECK_EQ(src.next(100, true, body).spans, size_t{0});
}

void batches_are_cut_at_max_spans_and_every_record_is_taken_once() {
  auto t = Tracer::create();
  auto main = t->attach_js_thread("main");
  const uint32_t n = t->intern("n");
  for (uint64_t i = 0; i < 1000; ++i) flat_span(*main, n, i);
  t->flush();
  auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
  OtlpSource& src = *src_p;
  std::string body;
  size_t total = 0, calls = 0;
  for (OtlpSource::Batch b; (b = src.next(300, false, body)).spans != 0; ++calls) total += b.spans;
  CHECK_EQ(total, size_t{1000});
  CHECK_EQ(calls, size_t{4});
}

void records_lost_before_they_are_taken_are_counted() {
  for (FullPolicy policy : {FullPolicy::kOverwrite, FullPolicy::kDrop}) {
    auto t = smallest_budget(policy);
    auto main = t->attach_js_thread("main");
    const uint32_t n = t->intern("n");
    auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
    OtlpSource& src = *src_p;
    std::string body;
    const uint64_t total = 3 * (ChunkPool::kMinLimit / ChunkPool::kChunkBytes) * kChunkRecords + 17;
    uint64_t taken = 0, lost = 0;
    for (uint64_t i = 0; i < total; ++i) {
      flat_span(*main, n, i);
      if (i == 1000) {  // one early read, then the budget overflows
        const OtlpSource::Batch b = src.next(size_t{1} << 30, false, body);
        taken += b.spans;
        lost += b.lost;
      }
    }
    t->flush();
    const OtlpSource::Batch b = src.next(size_t{1} << 30, true, body);
    taken += b.spans;
    lost += b.lost;
    CHECK(lost > 0);
    CHECK_EQ(taken + lost, total);
    CHECK_EQ(src.taken() + src.lost(), total);
  }
}

// Read through the consumer cursor: the chunks the source has read go back
// to the pool, so a source that keeps up exports far more than the budget
// holds with nothing dropped. Control: the same recording without reads drops.
void exported_chunks_are_released() {
  for (bool read : {true, false}) {
    auto t = smallest_budget(FullPolicy::kDrop);
    auto main = t->attach_js_thread("main");
    const uint32_t n = t->intern("n");
    auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
    OtlpSource& src = *src_p;
    std::string body;
    const uint64_t total = 4 * (ChunkPool::kMinLimit / ChunkPool::kChunkBytes) * kChunkRecords;
    uint64_t taken = 0;
    for (uint64_t i = 0; i < total; ++i) {
      flat_span(*main, n, i);
      if (read && i % kChunkRecords == 0) taken += src.next(size_t{1} << 30, false, body).spans;
    }
    t->flush();
    const OtlpSource::Batch last = src.next(size_t{1} << 30, true, body);
    taken += last.spans;
    RecordCounts c;
    for (const TimelineCounts& tc : t->counts()) c += tc.counts;
    CHECK_EQ(src.taken() + src.lost(), total);
    if (read) {
      CHECK_EQ(taken, total);
      CHECK_EQ(c.dropped, uint64_t{0});
      CHECK(c.released >= total - 2 * (ChunkPool::kMinLimit / ChunkPool::kChunkBytes) * kChunkRecords);
    } else {
      CHECK(c.dropped > 0);
    }
  }
}

// Records whose ancestor is still open wait outside the pool, at most
// kMaxHeld of them; past that they go with a trace of their own.
void held_records_are_bounded() {
  auto t = Tracer::create();
  auto main = t->attach_js_thread("main");
  const uint32_t n = t->intern("n");
  auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
  OtlpSource& src = *src_p;
  std::string body;
  const size_t children = OtlpSource::kMaxHeld + 1000;
  CHECK_EQ(begin(*main, n, 1), Status::kOk);
  for (size_t i = 0; i < children; ++i) {
    CHECK_EQ(begin(*main, n, static_cast<int64_t>(10 * i + 2)), Status::kOk);
    CHECK_EQ(end(*main, static_cast<int64_t>(10 * i + 5)), Status::kOk);
  }
  t->flush();
  CHECK_EQ(src.next(size_t{1} << 30, false, body).spans, size_t{1000});
  CHECK_EQ(src.waiting(), uint64_t{OtlpSource::kMaxHeld});
  CHECK_EQ(end(*main, static_cast<int64_t>(10 * children + 10)), Status::kOk);
  t->flush();
  CHECK_EQ(src.next(size_t{1} << 30, false, body).spans, OtlpSource::kMaxHeld + 1);
  CHECK_EQ(src.waiting(), uint64_t{0});
  CHECK_EQ(src.taken(), uint64_t{children + 1});
}

void json_request_is_one_json_object() {
  auto t = Tracer::create();
  auto main = t->attach_js_thread("main");
  const uint32_t n = t->intern("q\"uote\x01");
  CHECK_EQ(begin_with_attrs(*main, n, 10, R"({"k":"v\n","i":-7,"big":1e400})"), Status::kOk);
  CHECK_EQ(end(*main, 20, kFlagError), Status::kOk);
  t->flush();
  auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kJson, kOffset);
  OtlpSource& src = *src_p;
  std::string body;
  CHECK_EQ(src.next(10, false, body).spans, size_t{1});
  CHECK(json_text::is_object(body.data(), body.data() + body.size()));
  CHECK(has(body, "\"startTimeUnixNano\":\"" + std::to_string(kOffset + 10) + "\""));
  CHECK(has(body, "{\"key\":\"i\",\"value\":{\"intValue\":\"-7\"}}"));
  CHECK(has(body, "\"doubleValue\":\"Infinity\""));
  CHECK(has(body, "\"status\":{\"code\":2}"));
  // Text that is not one object: one string "attrs"; a span ended by cleanup: hotspan.abandoned.
  CHECK_EQ(begin_with_attrs(*main, n, 30, R"({"a":1} trailing)"), Status::kOk);
  CHECK_EQ(end(*main, 40, kFlagAbandoned), Status::kOk);
  t->flush();
  CHECK_EQ(src.next(10, false, body).spans, size_t{1});
  CHECK(json_text::is_object(body.data(), body.data() + body.size()));
  CHECK(has(body, "\"attributes\":[{\"key\":\"attrs\",\"value\":{\"stringValue\":\"{\\\"a\\\":1} trailing\"}},"
                  "{\"key\":\"hotspan.abandoned\",\"value\":{\"boolValue\":true}}]"));
  auto proto_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
  OtlpSource& proto = *proto_p;
  CHECK_EQ(proto.next(10, false, body).spans, size_t{2});
  const std::string text = protoc_decode(body);
  CHECK(has(text, "key: \"attrs\"\n        value {\n          string_value: \"{\\\"a\\\":1} trailing\""));
  CHECK(has(text, "key: \"hotspan.abandoned\"\n        value {\n          bool_value: true"));
}


// The ScopeSpans of a protoc-decoded request in order: "scope-name/version: span names...".
std::vector<std::string> scope_groups(const std::string& text) {
  std::vector<std::string> groups;
  size_t at = 0;
  while ((at = text.find("  scope_spans {\n", at)) != std::string::npos) {
    const size_t end = text.find("\n  scope_spans {\n", at + 1);
    const std::string block = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    std::string g;
    size_t p = 0;
    const size_t spans = block.find("\n    spans {");
    // Scope and span fields are 6 deep; an event's name is deeper.
    while ((p = block.find("\n      ", p)) != std::string::npos) {
      p += 7;
      if (block[p] == ' ') continue;
      const bool scope = p < spans;
      const size_t eol = block.find('\n', p);
      const std::string line = block.substr(p, eol - p);
      if (line.rfind("name: ", 0) == 0) {
        g += line.substr(6) + (scope ? "/|" : " ");
      } else if (scope && line.rfind("version: ", 0) == 0) {
        g.insert(g.size() - 1, line.substr(9));
      }
    }
    groups.push_back(g);
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return groups;
}

void reserved_otel_keys_become_span_fields_and_scopes() {
  auto t = Tracer::create();
  auto main = t->attach_js_thread("main");
  const char* const attrs[] = {
      R"({"a":1,"hotspan.kind":"server","hotspan.scope":{"name":"s-a","version":"1"}})",
      R"({"hotspan.kind":"client","hotspan.status":"error","hotspan.status_message":"bad \"x\" \u00e9","hotspan.scope":{"name":"s-b"}})",
      R"({"b":"two","hotspan.scope":{"name":"s-a","version":"1"}})",  // s-a's text repeated
      R"({"hotspan.scope":{"version":"1","name":"s-a"}})",           // s-a in another text
      R"({"hotspan.scope":{"name":"s-a","version":"2"}})",           // s-a's length, another version
      R"({"hotspan.scope":{"name":"s-\u0061","version":"2"}})",      // the same scope, escaped
      R"({"hotspan.status":"ok","hotspan.events":[{"name":"e\u00e9","time_unix_nano":"123","attributes":{"k":"v"}}],)"
      R"("hotspan.links":[{"trace_id":"0102030405060708090a0b0c0d0e0f10","span_id":"1112131415161718",)"
      R"("trace_state":"k=v","flags":1,"attributes":{"w":2}}],"hotspan.dropped":{"attributes":1,"events":2,"links":3},)"
      R"("hotspan.scope":{"name":"s-b"}})",
      R"({"c":3})",                                                 // none: the default scope
      R"({"hotspan.scope":{"name":"hotspan","version":"0.1.0"}})",  // the default scope by name
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; ++i) {
    const uint32_t n = t->intern("n" + std::to_string(i + 1));
    CHECK_EQ(begin_with_attrs(*main, n, 10 + 10 * static_cast<int64_t>(i), attrs[i]), Status::kOk);
    CHECK_EQ(end(*main, 15 + 10 * static_cast<int64_t>(i)), Status::kOk);
  }
  t->flush();
  auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
  std::string body;
  CHECK_EQ(src_p->next(100, false, body).spans, size_t{9});
  const std::string text = protoc_decode(body);
  CHECK(!text.empty());
  if (std::getenv("OTLP_TEST_DUMP") != nullptr) std::fputs(text.c_str(), stderr);
  const std::vector<std::string> groups = scope_groups(text);
  CHECK_EQ(groups.size(), size_t{4});
  if (groups.size() == 4) {
    CHECK_EQ(groups[0], std::string("\"hotspan\"/\"0.1.0\"|\"n8\" \"n9\" "));
    CHECK_EQ(groups[1], std::string("\"s-a\"/\"1\"|\"n1\" \"n3\" \"n4\" "));
    CHECK_EQ(groups[2], std::string("\"s-b\"/|\"n2\" \"n7\" "));
    CHECK_EQ(groups[3], std::string("\"s-a\"/\"2\"|\"n5\" \"n6\" "));
  }
  // No reserved key left as an attribute; the fields they became.
  CHECK(text.find("key: \"hotspan.") == std::string::npos);
  CHECK(has(text, "name: \"n1\"\n      kind: SPAN_KIND_SERVER\n"));
  CHECK(has(text, "key: \"a\"\n        value {\n          int_value: 1"));
  CHECK(has(text, "name: \"n2\"\n      kind: SPAN_KIND_CLIENT\n"));
  CHECK(has(text, "end_time_unix_nano: 25\n      status {\n        message: \"bad \\\"x\\\" \\303\\251\"\n"
                  "        code: STATUS_CODE_ERROR\n      }"));
  CHECK(has(text, "key: \"b\"\n        value {\n          string_value: \"two\""));
  CHECK(has(text, "name: \"n4\"\n      kind: SPAN_KIND_INTERNAL\n"));
  CHECK(has(text, "dropped_attributes_count: 1\n      events {\n        time_unix_nano: 123\n        name: \"e\\303\\251\"\n"
                  "        attributes {\n          key: \"k\"\n          value {\n            string_value: \"v\""));
  CHECK(has(text, "dropped_events_count: 2\n      links {\n        trace_id: \"\\001\\002\\003\\004\\005\\006\\007\\010\\t\\n\\013\\014\\r\\016\\017\\020\"\n"
                  "        span_id: \"\\021\\022\\023\\024\\025\\026\\027\\030\"\n        trace_state: \"k=v\"\n"
                  "        attributes {\n          key: \"w\"\n          value {\n            int_value: 2\n"));
  CHECK(has(text, "dropped_links_count: 3\n      status {\n        code: STATUS_CODE_OK\n      }"));

  // The next request: its scopes start again (s-a's text from the cache names the new group).
  CHECK_EQ(begin_with_attrs(*main, t->intern("n10"), 200, attrs[4]), Status::kOk);
  CHECK_EQ(end(*main, 210), Status::kOk);
  CHECK_EQ(begin_with_attrs(*main, t->intern("n11"), 220, attrs[0]), Status::kOk);
  CHECK_EQ(end(*main, 230), Status::kOk);
  t->flush();
  CHECK_EQ(src_p->next(100, false, body).spans, size_t{2});
  const std::vector<std::string> next = scope_groups(protoc_decode(body));
  CHECK_EQ(next.size(), size_t{2});
  if (next.size() == 2) {
    CHECK_EQ(next[0], std::string("\"s-a\"/\"2\"|\"n10\" "));
    CHECK_EQ(next[1], std::string("\"s-a\"/\"1\"|\"n11\" "));
  }
}

// The tail keep decides a trace only once every span that ended before its
// root, on any timeline, has been read: here the root's timeline is read
// first (the read is cut after it) and the failed span, on a track, ended
// before the root but comes in a later read. The failed trace is exported
// whole (3 spans), the trace without an error sampled out (1 span).
void a_failed_span_on_another_timeline_keeps_its_trace_whole() {
  TracerOptions o;
  o.sampler = sampler::kRootOff;  // the head sampler keeps nothing
  o.keep = tail_keep::kKeepErrors | (tail_keep::kMaxWaitMs << tail_keep::kWaitShift);
  auto t = Tracer::create(o);
  auto main = t->attach_js_thread("main");
  const uint32_t tl = timeline_id(*main);
  const uint32_t track = t->track("net", false);
  const uint32_t req = t->intern("req"), child = t->intern("child"), fail = t->intern("fail"), other = t->intern("other");
  auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
  OtlpSource& src = *src_p;
  CHECK_EQ(begin(*main, req, 10), Status::kOk);
  const uint64_t io = t->async_begin(track, fail, 11, {}, make_span_id(tl, 1));
  CHECK(t->async_end(io, 20, kFlagError) == Status::kOk);  // the failed span ends first, on the track
  CHECK_EQ(begin(*main, child, 21), Status::kOk);
  CHECK_EQ(end(*main, 25), Status::kOk);
  CHECK_EQ(end(*main, 30), Status::kOk);  // the root
  CHECK_EQ(begin(*main, other, 40), Status::kOk);
  CHECK_EQ(end(*main, 50), Status::kOk);  // a trace without an error
  t->flush();
  // Reads of 2: the first takes the main timeline's child and root only.
  size_t spans = 0;
  uint64_t sampled_out = 0, timed_out = 0;
  std::string text;
  for (int k = 0; k < 8; ++k) {
    std::string body;
    const OtlpSource::Batch b = src.next(2, false, body);
    spans += b.spans;
    sampled_out += b.sampled_out;
    timed_out += b.keep_timed_out;
    if (b.spans != 0) text += protoc_decode(body);
  }
  CHECK_EQ(spans, size_t{3});
  CHECK_EQ(sampled_out, uint64_t{1});
  CHECK_EQ(timed_out, uint64_t{0});
  CHECK_EQ(src.waiting(), uint64_t{0});
  const auto ids = oracle(*t);
  const TraceId failed = ids.at(make_span_id(tl, 1)).trace;
  size_t in_failed = 0;
  for (size_t at = 0; (at = text.find("trace_id: \"" + protoc_trace(failed) + "\"", at)) != std::string::npos; ++at) ++in_failed;
  CHECK_EQ(in_failed, size_t{3});
  CHECK(has(text, "code: STATUS_CODE_ERROR"));
}

// sample.keep.names: a span of a kept name keeps its trace whole as an error
// does, here with neither the slow nor the error bit set (the word carries
// only maxWait), the name interned after the source opened, and the named
// span on a track, ended before its root and read after it.
void a_span_of_a_kept_name_keeps_its_trace_whole() {
  TracerOptions o;
  o.sampler = sampler::kRootOff;  // the head sampler keeps nothing
  o.keep = tail_keep::kMaxWaitMs << tail_keep::kWaitShift;
  o.keep_names = {"pay"};
  auto t = Tracer::create(o);
  auto main = t->attach_js_thread("main");
  const uint32_t tl = timeline_id(*main);
  const uint32_t track = t->track("net", false);
  auto src_p = OtlpSource::open(t, resource(), OtlpEncoding::kProtobuf, 0);
  OtlpSource& src = *src_p;
  const uint32_t req = t->intern("req"), child = t->intern("child"), pay = t->intern("pay"), other = t->intern("other");
  CHECK_EQ(begin(*main, req, 10), Status::kOk);
  const uint64_t io = t->async_begin(track, pay, 11, {}, make_span_id(tl, 1));
  CHECK(t->async_end(io, 20, 0) == Status::kOk);  // no error flag: kept by its name
  CHECK_EQ(begin(*main, child, 21), Status::kOk);
  CHECK_EQ(end(*main, 25), Status::kOk);
  CHECK_EQ(end(*main, 30), Status::kOk);  // the root
  CHECK_EQ(begin(*main, other, 40), Status::kOk);
  CHECK_EQ(end(*main, 50), Status::kOk);  // a trace without the name
  t->flush();
  size_t spans = 0;
  uint64_t sampled_out = 0, timed_out = 0;
  std::string text;
  for (int k = 0; k < 8; ++k) {
    std::string body;
    const OtlpSource::Batch b = src.next(2, false, body);
    spans += b.spans;
    sampled_out += b.sampled_out;
    timed_out += b.keep_timed_out;
    if (b.spans != 0) text += protoc_decode(body);
  }
  CHECK_EQ(spans, size_t{3});
  CHECK_EQ(sampled_out, uint64_t{1});
  CHECK_EQ(timed_out, uint64_t{0});
  CHECK_EQ(src.waiting(), uint64_t{0});
  const TraceId kept = oracle(*t).at(make_span_id(tl, 1)).trace;
  size_t in_kept = 0;
  for (size_t at = 0; (at = text.find("trace_id: \"" + protoc_trace(kept) + "\"", at)) != std::string::npos; ++at) ++in_kept;
  CHECK_EQ(in_kept, size_t{3});
  CHECK(!has(text, "name: \"other\""));
}

}  // namespace

int main() {
  protobuf_request_decodes_with_the_upstream_schema();
  a_tree_waits_for_its_root_unless_final();
  spans_across_batches_get_their_trees_trace_id();
  tracestate_follows_the_trace_across_requests();
  batches_are_cut_at_max_spans_and_every_record_is_taken_once();
  records_lost_before_they_are_taken_are_counted();
  json_request_is_one_json_object();
  exported_chunks_are_released();
  held_records_are_bounded();
  reserved_otel_keys_become_span_fields_and_scopes();
  a_failed_span_on_another_timeline_keeps_its_trace_whole();
  a_span_of_a_kept_name_keeps_its_trace_whole();
  return check::result("otlp_test");
}
