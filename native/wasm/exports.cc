// The WebAssembly module's entry points (native/wasm/hotspan_core.wasm): the
// core's writers (whole or incremental), stats and query engine over the js
// backend's columns. The caller allocates an input buffer (hs_alloc), fills it
// as snapshot_columns.h lays out, and calls hs_write, hs_stats,
// hs_writer_append or hs_query_open, which take the buffer over (it is freed
// once decoded, before the output grows); the result is at hs_result_data()
// for hs_result_size() bytes until the next call.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "write/chrome_json_writer.h"
#include "export/otlp_batcher.h"
#include "write/perfetto_writer.h"
#include "read/query_call.h"
#include "exports.h"
#include "result.h"
#include "snapshot_columns.h"
#include "record/span_ids.h"
#include "read/stats.h"

// A query's records: the decoded columns and the engine over them (exports.h
// declares it for hs_query_open and hs_query).
struct QueryColumns {
  hotspan::Snapshot snapshot;
  std::unique_ptr<hotspan::SnapshotQuery<hotspan::Snapshot>> query;  // over the decoded snapshot
};

namespace hotspan::wasm {

// Allocated on first use: a reactor module runs no constructors before _initialize.
std::string& result() {
  static std::string* r = nullptr;
  if (r == nullptr) r = new std::string();
  return *r;
}

}  // namespace hotspan::wasm

using hotspan::wasm::result;

namespace {

// Decodes the columns at `input` and frees them.
bool take_columns(uint8_t* input, uint32_t size, hotspan::Snapshot& out) {
  const bool ok = hotspan::wasm::decode_columns(input, size, out);
  std::free(input);
  return ok;
}

// Columns' times are ns from the performance.now() origin; the writers take
// CLOCK_MONOTONIC ns.
void shift_times(hotspan::Snapshot& snapshot, int64_t origin_ns) {
  for (hotspan::SnapshotTimeline& tl : snapshot.timelines) {
    for (hotspan::SpanRecord& r : tl.records) {
      r.start_ns += origin_ns;
      r.end_ns += origin_ns;
    }
  }
  for (hotspan::CounterSeries& c : snapshot.counters) {
    for (hotspan::CounterSample& x : c.samples) x.ns += origin_ns;
  }
  for (std::shared_ptr<const hotspan::CpuProfile>& p : snapshot.cpu_profiles) {
    auto shifted = std::make_shared<hotspan::CpuProfile>(*p);
    for (int64_t& ns : shifted->sample_ns) ns += origin_ns;
    p = std::move(shifted);
  }
}

// A process name given as an hs_alloc buffer (taken over); none (size 0): the writers' default.
std::string take_process_name(uint8_t* name, uint32_t size) {
  std::string s = name == nullptr || size == 0 ? hotspan::DocumentInfo{}.process_name
                                               : std::string(reinterpret_cast<const char*>(name), size);
  std::free(name);
  return s;
}

// An incremental document (hs_writer_*): one of the core's writer objects,
// writing into the result, and the name table its batches extend.
struct Stream {
  int64_t origin_ns = 0;
  std::vector<std::string> names;
  std::unique_ptr<hotspan::DocumentWriter> writer;
};

std::vector<Stream*>& streams() {
  static std::vector<Stream*>* s = nullptr;
  if (s == nullptr) s = new std::vector<Stream*>();
  return *s;
}

Stream* stream_at(uint32_t handle) {
  std::vector<Stream*>& all = streams();
  return handle >= 1 && handle <= all.size() ? all[handle - 1] : nullptr;
}

// OTLP exporters' encoders (hs_otlp_*): the core's OtlpBatcher over the js
// backend's batches, one per exporter worker.
std::vector<hotspan::OtlpBatcher*>& otlp_batchers() {
  static std::vector<hotspan::OtlpBatcher*>* b = nullptr;
  if (b == nullptr) b = new std::vector<hotspan::OtlpBatcher*>();
  return *b;
}

uint32_t u32_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

extern "C" {

uint8_t* hs_alloc(uint32_t bytes) {
  return static_cast<uint8_t*>(std::malloc(bytes == 0 ? 1 : bytes));
}

void hs_free(uint8_t* p) { std::free(p); }

const char* hs_result_data() {
  return result().data();
}

uint32_t hs_result_size() {
  return static_cast<uint32_t>(result().size());
}

// One whole document of `format` into the result. The columns' times are
// ns from the performance.now() origin; `origin_ns` is that origin on
// CLOCK_MONOTONIC and the clock readings are the caller's (the writers say
// which clock their times are on, clock_readings.h), so the document is the
// one the native backend writes for the same records.
int32_t hs_write(uint8_t* input, uint32_t size,
                                                            uint32_t format, int64_t origin_ns,
                                                            int64_t monotonic_ns, int64_t realtime_ns,
                                                            int64_t boottime_ns, const double* counts,
                                                            uint32_t pid, uint8_t* name, uint32_t name_size) {
  std::string process_name = take_process_name(name, name_size);
  hotspan::Snapshot snapshot;
  if (!take_columns(input, size, snapshot)) return kBadInput;
  shift_times(snapshot, origin_ns);
  hotspan::DocumentInfo doc{origin_ns, {monotonic_ns, realtime_ns, boottime_ns}, {}};
  doc.process_name = std::move(process_name);
  if (pid != 0) doc.pid = pid;
  // counts: produced, kept, released, overwritten, dropped (the caller's
  // tracer.counts()), or null when the document has none.
  if (counts != nullptr) {
    hotspan::RecordCounts c;
    c.produced = static_cast<uint64_t>(counts[0]);
    c.kept = static_cast<uint64_t>(counts[1]);
    c.released = static_cast<uint64_t>(counts[2]);
    c.overwritten = static_cast<uint64_t>(counts[3]);
    c.dropped = static_cast<uint64_t>(counts[4]);
    doc.counts = hotspan::document_counts(c);
  }
  std::string& out = result();
  out.clear();
  if (format == kChromeJson) {
    hotspan::write_chrome_json(snapshot, doc, out);
  } else if (format == kPerfetto) {
    hotspan::write_perfetto(snapshot, doc, out);
  } else {
    return kBadFormat;
  }
  return kOk;
}

// Begins an incremental document of `format` (inputs as hs_write's); returns
// its handle (> 0), or 0 for an unknown format. The result is left empty.
uint32_t hs_writer_begin(uint32_t format, int64_t origin_ns,
                                                                          int64_t monotonic_ns,
                                                                          int64_t realtime_ns,
                                                                          int64_t boottime_ns) {
  if (format != kChromeJson && format != kPerfetto) return 0;
  result().clear();
  const hotspan::DocumentInfo doc{origin_ns, {monotonic_ns, realtime_ns, boottime_ns}, {}};
  auto* s = new Stream();
  s->origin_ns = origin_ns;
  if (format == kChromeJson) {
    s->writer = std::make_unique<hotspan::ChromeJsonWriter>(doc, result());
  } else {
    s->writer = std::make_unique<hotspan::PerfettoWriter>(doc, result());
  }
  std::vector<Stream*>& all = streams();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == nullptr) {
      all[i] = s;
      return static_cast<uint32_t>(i + 1);
    }
  }
  all.push_back(s);
  return static_cast<uint32_t>(all.size());
}

// One batch (columns as hs_write's; its names are the ones new since the
// previous batch, their ids following on) into the document; the bytes it
// gives are the result.
int32_t hs_writer_append(uint32_t handle, uint8_t* input,
                                                                            uint32_t size) {
  Stream* s = stream_at(handle);
  hotspan::Snapshot batch;
  const bool ok = take_columns(input, size, batch);
  result().clear();
  if (s == nullptr) return kBadHandle;
  if (!ok) return kBadInput;
  shift_times(batch, s->origin_ns);
  s->names.insert(s->names.end(), batch.names.begin(), batch.names.end());
  batch.names.swap(s->names);
  s->writer->append(batch);
  batch.names.swap(s->names);
  return kOk;
}

// The process of the batches appended next (DocumentWriter::set_process);
// the result is left empty.
int32_t hs_writer_process(uint32_t handle, uint32_t pid, uint8_t* name, uint32_t name_size) {
  std::string process_name = take_process_name(name, name_size);
  Stream* s = stream_at(handle);
  result().clear();
  if (s == nullptr) return kBadHandle;
  s->writer->set_process(pid, std::move(process_name));
  return kOk;
}

// Finishes the document (its last bytes are the result) and frees the handle.
int32_t hs_writer_finish(uint32_t handle) {
  Stream* s = stream_at(handle);
  result().clear();
  if (s == nullptr) return kBadHandle;
  s->writer->finish();
  delete s;
  streams()[handle - 1] = nullptr;
  return kOk;
}

// The stats rows into the result: 9 f64 per row (name id, count, total,
// min, max, mean, p50, p90, p99; times in ns), in the core's row order.
int32_t hs_stats(uint8_t* input, uint32_t size) {
  hotspan::Snapshot snapshot;
  if (!take_columns(input, size, snapshot)) return kBadInput;
  const std::vector<hotspan::StatsRow> rows = hotspan::compute_stats(snapshot);
  std::string& bytes = result();
  bytes.resize(rows.size() * kStatsRowDoubles * sizeof(double));
  double* out = reinterpret_cast<double*>(&bytes[0]);
  for (const hotspan::StatsRow& r : rows) {
    *out++ = r.name;
    *out++ = static_cast<double>(r.count);
    *out++ = static_cast<double>(r.total_ns);
    *out++ = static_cast<double>(r.min_ns);
    *out++ = static_cast<double>(r.max_ns);
    *out++ = r.mean_ns;
    *out++ = r.p50_ns;
    *out++ = r.p90_ns;
    *out++ = r.p99_ns;
  }
  return kOk;
}

// Query steps over one set of columns (lib/read/query.ts): hs_query_open takes
// the buffer over and returns a handle (0: malformed), hs_query runs one step
// (native/core/read/query_call.h: `args` is kQueryArgs f64, the name is UTF-8,
// name_size 0xFFFFFFFF for none) into the result as f64. The handle lives as
// long as the instance: lib/binding/wasm-core.ts gives each query an instance of its own.
QueryColumns* hs_query_open(uint8_t* input, uint32_t size) {
  auto* q = new QueryColumns();
  if (!take_columns(input, size, q->snapshot)) {
    delete q;
    return nullptr;
  }
  q->query.reset(new hotspan::SnapshotQuery<hotspan::Snapshot>(q->snapshot, 0));
  return q;
}

int32_t hs_query(const QueryColumns* q, const double* args,
                                                            const char* name, uint32_t name_size) {
  const bool has_name = name_size != 0xFFFFFFFFu;
  std::vector<double> out;
  const hotspan::QueryStatus status = hotspan::query_call(
      *q->query, args, hotspan::kQueryArgs, has_name, std::string_view(name, has_name ? name_size : 0), out);
  if (status != hotspan::QueryStatus::kOk) return kBadInput;
  std::string& bytes = result();
  bytes.assign(reinterpret_cast<const char*>(out.data()), out.size() * sizeof(double));
  return kOk;
}

// The W3C ids of every record of the columns (span_ids.h) into the result:
// 5 u64 per record [trace hi, trace lo, span id, parent span id, flags |
// resolved << 8 | (k + 1) << 32 where the trace comes from contexts[k]],
// timeline after timeline in the order of the columns'
// timeline section, each timeline's records in input order. `contexts`
// (taken over, may be null when count is 0) holds the records' stored
// contexts, 6 u64 each: timeline id, local id, trace hi, trace lo, parent
// wire id, trace flags. `sampler`: the tracer's head sampler (sampler.h).
int32_t hs_span_ids(uint8_t* input, uint32_t size,
                                                                  uint64_t* contexts, uint32_t count,
                                                                  uint64_t salt, uint64_t sampler) {
  hotspan::Snapshot snapshot;
  const bool ok = take_columns(input, size, snapshot);
  std::vector<uint64_t> given(contexts, contexts + 6 * static_cast<size_t>(count));
  std::free(contexts);
  result().clear();
  if (!ok) return kBadInput;
  std::vector<size_t> columns_contexts;  // contexts the columns carried themselves, per timeline
  for (const hotspan::SnapshotTimeline& tl : snapshot.timelines) columns_contexts.push_back(tl.contexts.size());
  for (size_t k = 0; k < count; ++k) {
    const uint64_t* e = &given[6 * k];
    for (hotspan::SnapshotTimeline& tl : snapshot.timelines) {
      if (tl.id != e[0]) continue;
      hotspan::StoredContext c;
      c.trace = hotspan::TraceId{e[2], e[3]};
      c.parent_wire = e[4];
      c.flags = static_cast<uint8_t>(e[5]);
      tl.contexts.emplace_back(static_cast<uint32_t>(e[1]), std::move(c));
    }
  }
  // Which given context each stored one is (its place in `contexts`), so the
  // caller can find the tracestate a record's trace came from: the
  // timelines' context lists are complete here, their addresses final.
  std::unordered_map<const hotspan::StoredContext*, uint64_t> given_index;
  for (size_t t = 0; t < snapshot.timelines.size(); ++t) {
    hotspan::SnapshotTimeline& tl = snapshot.timelines[t];
    size_t j = columns_contexts[t];
    for (size_t k = 0; k < count; ++k) {
      if (given[6 * k] == tl.id) given_index.emplace(&tl.contexts[j++].second, k);
    }
  }
  std::vector<std::vector<hotspan::SpanIds>> ids;
  hotspan::resolve_span_ids(snapshot, salt, ids, sampler);
  std::string& bytes = result();
  size_t n = 0;
  for (const auto& t : ids) n += t.size();
  bytes.resize(n * 5 * sizeof(uint64_t));
  uint64_t* out = reinterpret_cast<uint64_t*>(&bytes[0]);
  for (const auto& t : ids) {
    for (const hotspan::SpanIds& x : t) {
      const auto from = x.context != nullptr ? given_index.find(x.context) : given_index.end();
      *out++ = x.trace.hi;
      *out++ = x.trace.lo;
      *out++ = x.span;
      *out++ = x.parent;
      *out++ = x.flags | (x.resolved ? 0x100u : 0u) | (from != given_index.end() ? (from->second + 1) << 32 : 0);
    }
  }
  return kOk;
}

// The ids of tracer-wide span id `span` as a root (the addon's idsOf): its
// wire id, the trace it starts and that trace's flags under `sampler`
// (sampler.h), 4 u64 into the result.
int32_t hs_root_ids(uint64_t span, uint64_t salt, uint64_t sampler) {
  const hotspan::TraceId root = hotspan::trace_id::derived_trace_id(salt, span);
  std::string& bytes = result();
  bytes.resize(4 * sizeof(uint64_t));
  uint64_t* out = reinterpret_cast<uint64_t*>(&bytes[0]);
  out[0] = hotspan::trace_id::wire_span_id(salt, span);
  out[1] = root.hi;
  out[2] = root.lo;
  out[3] = hotspan::sampler::trace_flags(sampler, root, false, 0);
  return kOk;
}

// An OTLP encoder for one exporter (otlp_batcher.h); returns its handle, 0
// for a malformed `resource` (taken over): u32 pair count P, then 2P + 1
// strings as u32 byte length + UTF-8: the resource attributes' keys and
// values in turn, then the scope version. `unix_offset_ns` is added to the
// batches' times (ns from the performance.now() origin); `salt` is the
// tracer's id salt, `sampler` its head sampler (sampler.h), `keep` its tail
// keep (tail_keep.h).
uint32_t hs_otlp_open(uint8_t* resource, uint32_t size, uint32_t encoding,
                                                                     int64_t unix_offset_ns, uint64_t salt,
                                                                     uint64_t sampler, uint64_t keep) {
  hotspan::OtlpResource r;
  size_t at = 0;
  bool ok = size >= 4;
  std::vector<std::string> strings;
  const uint64_t pairs = ok ? u32_at(resource) : 0;
  at = 4;
  for (uint64_t k = 0; ok && k < 2 * pairs + 1; ++k) {
    ok = size - at >= 4;
    if (!ok) break;
    const uint32_t n = u32_at(resource + at);
    at += 4;
    ok = n <= size - at;
    if (!ok) break;
    strings.emplace_back(reinterpret_cast<const char*>(resource + at), n);
    at += n;
  }
  std::free(resource);
  if (!ok || encoding > 1) return 0;
  for (uint64_t k = 0; k < pairs; ++k) r.attributes.emplace_back(strings[2 * k], strings[2 * k + 1]);
  r.scope_version = strings.back();
  otlp_batchers().push_back(new hotspan::OtlpBatcher(
      r, encoding == 1 ? hotspan::OtlpEncoding::kJson : hotspan::OtlpEncoding::kProtobuf, unix_offset_ns, salt, sampler, keep));
  return static_cast<uint32_t>(otlp_batchers().size());
}

// A span name (UTF-8, taken over) whose trace the encoder's tail keep keeps
// whole (OtlpBatcher::keep_name); kBadHandle for an unknown handle.
int32_t hs_otlp_keep_name(uint32_t handle, uint8_t* name, uint32_t size) {
  hotspan::OtlpBatcher* b = handle >= 1 && handle <= otlp_batchers().size() ? otlp_batchers()[handle - 1] : nullptr;
  if (b != nullptr) b->keep_name(std::string(reinterpret_cast<const char*>(name), size));
  std::free(name);
  return b == nullptr ? kBadHandle : kOk;
}

// One read of an OTLP export: the new records (columns as hs_write's, taken
// over; their names are the ones new since the previous call) and their
// stored contexts (taken over, may be null when count is 0: 6 u64 each as
// hs_span_ids', then count u32 tracestate byte lengths and their UTF-8).
// `unread`: records left for a later read; `final`: as OtlpBatcher::encode;
// `read_through_ms`: the read watermark (hs_rec_export_take), ms on the
// columns' axis (Infinity: every record read).
// The result: u32 spans, u32 records held back, u32 records of unsampled
// traces (not encoded), u32 records decided by the head sampler alone past
// the tail keep's wait (Result::keep_timed_out), then the request (when
// spans > 0).
int32_t hs_otlp_next(uint32_t handle, uint8_t* input, uint32_t size,
                                                                    uint8_t* contexts, uint32_t contexts_size,
                                                                    uint32_t count, uint32_t max_spans, uint32_t final,
                                                                    uint32_t unread, double read_through_ms) {
  hotspan::Snapshot fresh;
  bool ok = take_columns(input, size, fresh);
  std::vector<std::pair<uint64_t, hotspan::StoredContext>> given;  // by timeline id << 32 | local id
  const uint64_t words = 6 * static_cast<uint64_t>(count);
  ok = ok && contexts_size >= 8 * words + 4 * uint64_t{count};
  size_t at = 8 * words + 4 * size_t{count};
  for (uint32_t k = 0; ok && k < count; ++k) {
    uint64_t e[6];
    std::memcpy(e, contexts + 48 * size_t{k}, sizeof e);
    const uint32_t n = u32_at(contexts + 8 * words + 4 * size_t{k});
    ok = n <= contexts_size - at;
    if (!ok) break;
    hotspan::StoredContext c;
    c.trace = hotspan::TraceId{e[2], e[3]};
    c.parent_wire = e[4];
    c.flags = static_cast<uint8_t>(e[5]);
    c.tracestate.assign(reinterpret_cast<const char*>(contexts + at), n);
    at += n;
    given.emplace_back(e[0] << 32 | (e[1] & 0xffffffffu), std::move(c));
  }
  std::free(contexts);
  hotspan::OtlpBatcher* b = handle >= 1 && handle <= otlp_batchers().size() ? otlp_batchers()[handle - 1] : nullptr;
  if (b == nullptr) return kBadHandle;
  if (!ok || max_spans == 0) return kBadInput;
  for (std::string& name : fresh.names) b->add_name(name);
  hotspan::Snapshot in;
  for (hotspan::SnapshotTimeline& tl : fresh.timelines) {
    if (tl.records.empty()) continue;
    hotspan::SnapshotTimeline& bt = b->timeline(in, tl.id, tl.kind);
    bt.records.insert(bt.records.end(), tl.records.begin(), tl.records.end());
    for (auto& a : tl.attrs) bt.attrs.push_back(std::move(a));
    for (const auto& f : tl.foreign_parents) bt.foreign_parents.push_back(f);
    for (auto& g : given) {
      if (g.first >> 32 == tl.id) bt.contexts.emplace_back(static_cast<uint32_t>(g.first), std::move(g.second));
    }
  }
  std::string body;
  // The watermark on the records' axis (as take_columns reads their times); NaN: none.
  const int64_t through = !(read_through_ms > -1e15)  ? INT64_MIN
                          : !(read_through_ms < 1e15) ? INT64_MAX
                                                      : hotspan::wasm::ms_to_ns(read_through_ms);
  const hotspan::OtlpBatcher::Result r = b->encode(in, unread != 0, max_spans, final != 0, body, through);
  std::string& out = result();
  out.assign(16, '\0');
  const uint32_t head[4] = {static_cast<uint32_t>(r.spans), static_cast<uint32_t>(r.waiting),
                            static_cast<uint32_t>(r.sampled_out), static_cast<uint32_t>(r.keep_timed_out)};
  std::memcpy(&out[0], head, sizeof head);
  out += body;
  return kOk;
}

}  // extern "C"
