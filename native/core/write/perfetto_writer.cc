// Perfetto protobuf writer. The document, in order (test/perfetto.test.ts
// decodes it with the .proto):
//
// 1. A packet with SEQ_INCREMENTAL_STATE_CLEARED, the interned data (event
//    names: iid = name id + 1; debug annotation names 1..4 = span_id,
//    parent_id, error, abandoned), trace_packet_defaults naming the
//    timestamp clock (kPerfettoClockId) and the ClockSnapshot relating it
//    to MONOTONIC, BOOTTIME and REALTIME (perfetto_writer.h); then a packet
//    with the process track (the document's pid and process_name).
// 2. One TrackDescriptor packet per timeline, in snapshot order: thread
//    timelines as thread tracks (pid, tid = timeline id, thread_name),
//    tracks and the groups timeline as named tracks under the process.
// 3. Per timeline, a TYPE_SLICE_BEGIN / TYPE_SLICE_END pair per span, in an
//    order that nests per track: thread and group timelines are stacks, so
//    their spans are replayed in begin (local id) order with the depth
//    closing earlier siblings. Tracks may hold overlapping async spans: they
//    are laid out greedily (by start, longer first) on lanes, each lane being
//    a stack: a span goes on its parent's lane when its parent (a span of
//    the same track) is the innermost span open there and contains it, else
//    on the lowest free lane, so a viewer never shows an unrelated span as
//    another's child. Lane 0 is the track itself, lane k >= 1 a child track
//    "<name> #<k+1>" whose descriptor precedes the track's events.
//
// 4. Per counter series (after the batch's spans), a TrackDescriptor with a
//    CounterDescriptor (named as the series, under the process) on first
//    sight, then a TYPE_COUNTER event per sample with double_counter_value.
//    Samples a full series dropped are counted in the descriptor's
//    description (the descriptor is written again when the count grows).
// 5. Per CPU profile (after the counters; cpu_profile.h), the samples as
//    PerfSample packets, which trace processors put in their perf_sample
//    table and ui.perfetto.dev draws under the thread's slices: first a
//    packet of the interned data new to the file (function_names,
//    source_paths, mapping_paths; a Mapping per script URL, "(v8)" for
//    none; a Frame per distinct function: its name, its mapping, rel_pc =
//    its own iid, source_path_iid and the 1-based line_number when known;
//    a Callstack per distinct stack, bottom frame first, without V8's
//    "(root)"), then per sample a packet at its time with perf_sample
//    {pid, tid = the timeline id (the thread track's), callstack_iid}.
//    Samples the store refused are counted in the counts track's JSON as
//    "cpu_samples_dropped".
//
// Every packet has trusted_packet_sequence_id = the pid, and every track
// uuid is xored with the pid's salt (perfetto_writer.h); begins carry
// SEQ_NEEDS_INCREMENTAL_STATE (they use interned names). Begins carry debug
// annotations: span_id, parent_id (only when the span has a parent that is
// not the slice enclosing it on its track: a parent on another timeline, a
// parent not in the snapshot, any parent on an async track), error /
// abandoned (bool, only when flagged), then the attribute members (key as
// name; string, int (safe integers, |v| < 2^53), double, bool; null / nested
// values as legacy_json_value). Attribute text that is not a JSON object is
// one string annotation "attrs". Strings are written as valid UTF-8 (invalid
// bytes become U+FFFD, as V8 decodes them).
//
// Speed: the per-span path writes raw bytes into one pre-sized buffer;
// lengths are reserved as one byte and widened in place in the rare case
// they pass 127.
#include "write/perfetto_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "read/attr_members.h"
#include "record/json_text.h"
#include "record/local_index.h"
#include "write/proto_wire.h"

namespace hotspan {
namespace {

using namespace json_text;
using proto_wire::close_len;
using proto_wire::open_len;
using proto_wire::put_key_fixed64;
using proto_wire::put_key_len;
using proto_wire::put_key_varint;
using proto_wire::put_varint;
using proto_wire::varint_size;

// Field keys (field number << 3 | wire type), one byte unless noted.
constexpr uint8_t kTracePacket = 0x0A;       // Trace.packet = 1, LEN
constexpr uint8_t kTimestamp = 0x40;         // TracePacket.timestamp = 8
constexpr uint8_t kSequenceId = 0x50;        // trusted_packet_sequence_id = 10
constexpr uint8_t kTrackEvent = 0x5A;        // track_event = 11, LEN
constexpr uint8_t kSequenceFlags = 0x68;     // sequence_flags = 13
constexpr uint32_t kTrackDescriptorField = 60;
constexpr uint32_t kInternedDataField = 12;
constexpr uint32_t kPerfSampleField = 66;    // TracePacket.perf_sample
constexpr uint8_t kEventType = 0x48;         // TrackEvent.type = 9
constexpr uint8_t kEventNameIid = 0x50;      // TrackEvent.name_iid = 10
constexpr uint8_t kEventTrackUuid = 0x58;    // TrackEvent.track_uuid = 11
constexpr uint8_t kEventAnnotation = 0x22;   // TrackEvent.debug_annotations = 4, LEN
constexpr uint32_t kEventNameField = 23;     // TrackEvent.name (string)

constexpr uint8_t kSeqCleared = 1;     // SEQ_INCREMENTAL_STATE_CLEARED
constexpr uint8_t kSeqNeedsState = 2;  // SEQ_NEEDS_INCREMENTAL_STATE
constexpr uint8_t kSliceBegin = 1;
constexpr uint8_t kSliceEnd = 2;
constexpr uint8_t kCounter = 4;                // TYPE_COUNTER
constexpr uint32_t kDoubleCounterValue = 44;   // TrackEvent.double_counter_value (fixed64)

// Debug annotation name iids (interned in the first packet).
constexpr uint8_t kIidSpanId = 1, kIidParentId = 2, kIidError = 3, kIidAbandoned = 4;
const char* const kAnnotationNames[] = {"span_id", "parent_id", "error", "abandoned"};

// ---- cold encoding: descriptors, interned data, attributes ----

using Pb = proto_wire::Message;

// DebugAnnotation fields.
constexpr uint32_t kAnnName = 10, kAnnBool = 2, kAnnInt = 4, kAnnDouble = 5, kAnnString = 6,
                   kAnnJson = 9;

// Writes each member as a DebugAnnotation message (with its
// TrackEvent.debug_annotations key and length).
class AnnotationMembers final : public AttrMemberVisitor {
 public:
  explicit AnnotationMembers(std::string& out) : out_(out) {}
  void member(std::string_view key, const AttrValue& v) override {
    const size_t body = open_len(out_, kEventAnnotation);
    put_key_len(out_, kAnnName, key.size());
    out_ += key;
    switch (v.kind) {
      case AttrValue::kString:
        put_key_len(out_, kAnnString, v.str.size());
        out_ += v.str;
        break;
      case AttrValue::kBool:
        put_key_varint(out_, kAnnBool, v.b ? 1 : 0);
        break;
      case AttrValue::kInt:
        put_key_varint(out_, kAnnInt, static_cast<uint64_t>(v.i));
        break;
      case AttrValue::kDouble:
        put_key_fixed64(out_, kAnnDouble, &v.d);
        break;
      case AttrValue::kJson:
        put_key_len(out_, kAnnJson, v.json_n);
        out_.append(v.json, v.json_n);
        break;
    }
    close_len(out_, body);
  }

 private:
  std::string& out_;
};

// Encodes the members of an attribute object as DebugAnnotation messages
// into `out`; text that is not an object becomes one string "attrs".
void encode_attrs(const std::string& raw, std::string& out, AttrScratch& sc) {
  const size_t start = out.size();
  AnnotationMembers members(out);
  const char* b = nullptr;
  const char* e = nullptr;
  if (visit_attr_members(raw, sc, members, &b, &e)) return;
  out.resize(start);
  const size_t body = open_len(out, kEventAnnotation);
  put_key_len(out, kAnnName, 5);
  out.append("attrs", 5);
  put_key_len(out, kAnnString, static_cast<size_t>(e - b));
  out.append(b, static_cast<size_t>(e - b));
  close_len(out, body);
}


inline uint32_t local_at(const SpanRecords& recs, uint32_t i) { return recs[i].local_id; }
inline uint32_t local_at(const FrozenRecords& recs, uint32_t i) { return recs.local_id(i); }

// The records of a track, for its lane layout (which reads them many times).
inline const SpanRecords& track_records(const SpanRecords& recs, SpanRecords&) { return recs; }
inline const SpanRecords& track_records(const FrozenRecords& recs, SpanRecords& copy) {
  recs.materialize(copy);
  return copy;
}

// Record indexes of recs[0, n) in local id (= begin) order.
template <typename Records>
std::vector<uint32_t> begin_order(const Records& recs, size_t n) {
  if (n != 0) {
    // Dense ids (the normal case): a counting placement, O(n), compacted in
    // place. Placed from the lowest id: a stream's batch (or a timeline
    // whose oldest records were recycled) starts far above 0, and a sort of
    // it was a third of the stream writer's instructions.
    constexpr uint32_t kNone = 0xFFFFFFFFu;
    const size_t cap = 2 * n + 1025;
    uint32_t low = local_at(recs, 0);
    uint32_t high = low;
    for (uint32_t i = 1; i < n; ++i) {
      const uint32_t local = local_at(recs, i);
      low = std::min(low, local);
      high = std::max(high, local);
    }
    const bool dense = static_cast<size_t>(high - low) < cap;
    bool dup = false;
    std::vector<uint32_t> slot;
    if (dense) {
      slot.assign(static_cast<size_t>(high - low) + 1, kNone);
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t& s = slot[local_at(recs, i) - low];
        dup |= s != kNone;
        s = i;
      }
    }
    if (dense && !dup) {
      size_t w = 0;
      for (uint32_t s : slot)
        if (s != kNone) slot[w++] = s;
      slot.resize(w);
      return slot;
    }
  }
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return local_at(recs, a) < local_at(recs, b); });
  return order;
}

}  // namespace

// The state behind PerfettoWriter. Per timeline it keeps what spans arriving
// in later batches need: thread and group timelines the records waiting for
// their tree's root (and the slices still open), tracks their lanes.
class PerfettoWriter::Impl {
 public:
  // Without `out`, the output goes to `sink` through a scratch block.
  Impl(const DocumentInfo& doc, std::string* out, BlockSink* sink)
      : origin_(doc.origin_ns),
        clocks_(doc.clocks),
        pid_(doc.pid),
        process_name_(doc.process_name),
        seq_(perfetto_sequence_id(doc.pid)),
        salt_(perfetto_uuid_salt(doc.pid)),
        counts_(doc.counts),
        out_(out != nullptr ? *out : block_),
        sink_(sink) {}

  template <typename SnapshotT>
  void append(const SnapshotT& batch, bool last) {
    size_t estimate = 256;
    for (size_t i = names_sent_; i < batch.names.size(); ++i) estimate += batch.names[i].size() + 8;
    for (const auto& tl : batch.timelines) {
      estimate += 64 + tl.name.size() + 64 * tl.records.size();
      for (const auto& a : tl.attrs) estimate += a.second.size() + 16;
    }
    for (const CounterSeries& c : batch.counters) estimate += 96 + c.name.size() + 32 * c.samples.size();
    for (const auto& prof : batch.cpu_profiles) estimate += 96 * prof->node_frame.size() + 24 * prof->sample_ns.size();
    open_output(estimate);
    names_known_ = batch.names.size();
    if (!header_sent_) {
      header(batch.names);
    } else if (names_sent_ < batch.names.size()) {
      more_names(batch.names);
    }
    for (const auto& tl : batch.timelines) {
      TimelineState& st = state(tl);
      if (!st.described) {
        descriptor(st);
        st.described = true;
      }
    }
    for (const auto& tl : batch.timelines) {
      TimelineState& st = state(tl);
      if (tl.kind == TimelineKind::kTrack) {
        if (!tl.records.empty()) track_spans(st, tl.records, tl.records.size(), tl.attrs, tl.foreign_parents);
      } else {
        stack_append(st, tl, last);
      }
    }
    for (const CounterSeries& c : batch.counters) counter_series(c);
    for (const auto& prof : batch.cpu_profiles) cpu_samples(*prof);
    cpu_dropped_ = std::max(cpu_dropped_, batch.cpu_samples_dropped);
    close_output();
  }

  // Writes what still waits (trees whose root never came); a document
  // without a batch still gets its header.
  void finish() {
    bool waiting = false;
    for (const auto& entry : timelines_) waiting |= !entry.second.pending.empty();
    if (header_sent_ && !waiting && counts_.empty() && cpu_dropped_ == 0) return;
    open_output(256);
    if (!header_sent_) header({});
    for (auto& entry : timelines_) {
      TimelineState& st = entry.second;
      if (st.pending.empty()) continue;
      stack_spans(st, st.pending, st.pending.size(), st.pending_attrs, st.pending_foreign);
      clear_pending(st);
    }
    if (!counts_.empty() || cpu_dropped_ != 0) counts_descriptor();
    close_output();
  }

  void set_counts(DocumentCounts counts) { counts_ = std::move(counts); }

  void restart() {
    header_sent_ = false;
    names_sent_ = 0;
    timelines_.clear();
    counters_.clear();
    interned_ = CpuInterned{};
  }

 private:
  // What a slice still open on a stack timeline needs for its end.
  struct Open {
    int64_t end_ns;
    uint32_t local_id;
    uint16_t depth;
  };
  struct TimelineState {
    uint32_t id = 0;
    TimelineKind kind = TimelineKind::kJs;
    std::string name;
    bool described = false;
    // Stack timelines: records (and their side entries) whose tree's root
    // has not arrived, and the slices begun and not yet ended.
    SpanRecords pending;
    std::vector<std::pair<uint32_t, std::string>> pending_attrs;
    std::vector<std::pair<uint32_t, uint64_t>> pending_foreign;
    std::vector<Open> open;
    // Tracks: per lane, the end of its last bottom span (see track_spans),
    // and how many lanes have descriptors.
    std::vector<int64_t> lane_end;
    uint32_t described_lanes = 1;  // lane 0 is the track's own descriptor
  };

  template <typename TimelineT>
  TimelineState& state(const TimelineT& tl) {
    TimelineState& st = timelines_[tl.id];
    if (st.id == 0) {
      st.id = tl.id;
      st.kind = tl.kind;
      st.name = tl.name;
    }
    return st;
  }

  // Sizes the buffer for about `estimate` more bytes.
  void open_output(size_t estimate) {
    if (sink_ != nullptr) {
      // One block plus the largest packet that may overshoot it.
      estimate = std::min(estimate, sink_->block_bytes() + (64 << 10));
      pos_ = 0;
    } else {
      pos_ = out_.size();
    }
    block_size_ = pos_ + estimate;
    if (out_.size() < block_size_) {
      out_.reserve(block_size_);
      out_.resize(block_size_);
    }
  }
  // Hands what was written to the sink (at the end of every call, so the
  // file holds each batch whole), or trims `out` to it. The scratch block
  // keeps its size: the next call's resize would otherwise zero a whole
  // block again (per batch of a stream, 5% of its instructions).
  void close_output() {
    if (sink_ != nullptr) {
      hand_over();
    } else {
      out_.resize(pos_);
    }
  }

  uint8_t* at() { return reinterpret_cast<uint8_t*>(&out_[0]) + pos_; }
  // After each span event: hand a full block to the sink.
  void boundary() {
    if (sink_ != nullptr && pos_ >= sink_->block_bytes()) hand_over();
  }
  // The sink takes what was written (a streamed block starts at 0), maybe
  // with the buffer itself; the block starts over, in whatever buffer it
  // hands back, sized again.
  void hand_over() {
    sink_->take_block(out_, pos_);
    pos_ = 0;
    if (out_.size() < block_size_) out_.resize(block_size_);
  }
  void ensure(size_t n) {
    if (pos_ + n > out_.size()) out_.resize(std::max(out_.size() * 2, pos_ + n));
  }
  void raw(const std::string& s) {
    ensure(s.size());
    std::memcpy(at(), s.data(), s.size());
    pos_ += s.size();
  }
  // One packet from a cold-built body.
  void packet(const Pb& body) {
    Pb p;
    p.msg(1, body);
    raw(p.s);
  }

  uint64_t ts(int64_t ns) const {
    const int64_t v = ns - origin_ + kPerfettoTimestampOffsetNs;
    return v < 0 ? 0 : static_cast<uint64_t>(v);
  }

  void header(const std::vector<std::string>& names) {
    Pb interned;
    for (size_t i = 0; i < names.size(); ++i) {
      Pb en;
      en.uint(1, i + 1);
      en.str(2, sanitized(names[i]));
      interned.msg(2, en);  // event_names
    }
    for (uint32_t k = 0; k < 4; ++k) {
      Pb dn;
      dn.uint(1, k + 1);
      dn.str(2, kAnnotationNames[k]);
      interned.msg(3, dn);  // debug_annotation_names
    }
    Pb defaults;
    defaults.uint(58, kPerfettoClockId);  // timestamp_clock_id
    Pb body;
    body.uint(10, seq_);
    body.uint(13, kSeqCleared);
    body.msg(kInternedDataField, interned);
    body.msg(59, defaults);             // trace_packet_defaults
    body.msg(6, clock_snapshot());      // clock_snapshot
    packet(body);
    header_sent_ = true;
    names_sent_ = names.size();

    Pb proc;
    proc.uint(1, pid_);         // pid
    proc.str(6, sanitized(process_name_));  // process_name
    Pb td;
    td.uint(1, kPerfettoProcessUuid ^ salt_);
    td.msg(3, proc);  // process
    descriptor_packet(td);
  }

  // Names added to the table since the last batch, interned in a packet of
  // their own before any event uses them.
  void more_names(const std::vector<std::string>& names) {
    Pb interned;
    for (size_t i = names_sent_; i < names.size(); ++i) {
      Pb en;
      en.uint(1, i + 1);
      en.str(2, sanitized(names[i]));
      interned.msg(2, en);  // event_names
    }
    Pb body;
    body.uint(10, seq_);
    body.uint(13, kSeqNeedsState);
    body.msg(kInternedDataField, interned);
    packet(body);
    names_sent_ = names.size();
  }

  // Our clock and the system clocks at one instant. Without a BOOTTIME
  // reading (the default trace clock of readers) MONOTONIC is named the
  // trace's clock, so the spans still have a clock to land on.
  Pb clock_snapshot() const {
    Pb snap;
    auto clock = [&](uint32_t id, int64_t ns) {
      Pb c;
      c.uint(1, id);                                  // clock_id
      c.uint(2, static_cast<uint64_t>(ns < 0 ? 0 : ns));  // timestamp
      snap.msg(1, c);                                 // clocks
    };
    clock(kPerfettoClockId, static_cast<int64_t>(ts(clocks_.monotonic_ns)));
    clock(kPerfettoMonotonic, clocks_.monotonic_ns);
    if (clocks_.boottime_ns >= 0) clock(kPerfettoBoottime, clocks_.boottime_ns);
    clock(kPerfettoRealtime, clocks_.realtime_ns);
    if (clocks_.boottime_ns < 0) snap.uint(2, kPerfettoMonotonic);  // primary_trace_clock
    return snap;
  }

  // The recording's counts (document_info.h): a track descriptor of its own
  // (no events, so readers that replay slices see nothing new), named
  // "hotspan.counts", its description the counts as a JSON object.
  void counts_descriptor() {
    std::string json = "{";
    for (const auto& [name, value] : counts_.values) {
      if (json.size() > 1) json.push_back(',');
      json += "\"" + name + "\":" + std::to_string(value);
    }
    if (cpu_dropped_ != 0) {
      if (json.size() > 1) json.push_back(',');
      json += "\"cpu_samples_dropped\":" + std::to_string(cpu_dropped_);
    }
    json.push_back('}');
    Pb td;
    td.uint(1, kPerfettoCountsUuid ^ salt_);
    td.uint(5, kPerfettoProcessUuid ^ salt_);  // parent_uuid
    td.str(2, "hotspan.counts");       // name
    td.str(14, json);                  // description
    descriptor_packet(td);
  }

  void descriptor_packet(const Pb& td) {
    Pb body;
    body.uint(10, seq_);
    body.msg(kTrackDescriptorField, td);
    packet(body);
  }

  void descriptor(const TimelineState& tl) {
    Pb td;
    td.uint(1, perfetto_track_uuid(tl.id, 0) ^ salt_);
    if (tl.kind == TimelineKind::kJs || tl.kind == TimelineKind::kNative) {
      Pb th;
      th.uint(1, pid_);   // pid
      th.uint(2, tl.id);  // tid
      th.str(5, sanitized(tl.name));
      td.msg(4, th);  // thread
    } else {
      td.uint(5, kPerfettoProcessUuid ^ salt_);  // parent_uuid
      td.str(2, sanitized(tl.name));     // name
    }
    descriptor_packet(td);
  }

  // A counter series of a batch: its descriptor on first sight (again when
  // its drop count grows), then one TYPE_COUNTER event per sample.
  void counter_series(const CounterSeries& c) {
    auto [it, fresh] = counters_.try_emplace(c.name);
    CounterState& st = it->second;
    if (fresh) st.uuid = perfetto_counter_uuid(counters_.size() - 1) ^ salt_;
    st.dropped += c.dropped;
    if (fresh || c.dropped != 0) {
      Pb td;
      td.uint(1, st.uuid);
      td.uint(5, kPerfettoProcessUuid ^ salt_);  // parent_uuid
      td.str(2, sanitized(c.name));      // name
      td.msg(8, Pb{});                   // counter: a CounterDescriptor (defaults)
      if (st.dropped != 0) {
        td.str(14, std::to_string(st.dropped) + " samples dropped: the series was full");  // description
      }
      descriptor_packet(td);
    }
    for (const CounterSample& sample : c.samples) {
      Pb ev;
      ev.uint(9, kCounter);   // type
      ev.uint(11, st.uuid);   // track_uuid
      uint64_t bits;
      std::memcpy(&bits, &sample.value, 8);
      ev.key(kDoubleCounterValue, 1);
      for (int b = 0; b < 8; ++b) ev.s.push_back(static_cast<char>(bits >> (8 * b)));
      Pb body;
      body.uint(8, ts(sample.ns));  // timestamp
      body.uint(10, seq_);
      body.msg(11, ev);  // track_event
      packet(body);
      boundary();
    }
  }

  // What the file has interned for CPU samples (iids from 1, per kind).
  struct CpuInterned {
    std::map<std::string, uint64_t> functions, sources, mappings;  // by text (mapping: its path)
    std::map<std::string, uint64_t> frames;                         // by cpu_frame_key
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> stacks;       // by (caller stack, frame)
  };

  // The iid of `text` in `table`, interning it into `pb` under `field` when new.
  static uint64_t intern_string(std::map<std::string, uint64_t>& table, const std::string& text, Pb& pb,
                                uint32_t field) {
    auto [it, fresh] = table.try_emplace(text, table.size() + 1);
    if (fresh) {
      Pb s;
      s.uint(1, it->second);
      s.str(2, text);
      pb.msg(field, s);
    }
    return it->second;
  }

  // One profile's samples (section 5 at the top of the file).
  void cpu_samples(const CpuProfile& prof) {
    if (prof.sample_ns.empty()) return;
    CpuInterned& in = interned_;
    // New entries of InternedData (repeated fields, in any order): function_names 5,
    // frames 6, callstacks 7, mapping_paths 17, source_paths 18, mappings 19.
    Pb interned;
    std::vector<uint64_t> frame_iid(prof.frames.size(), 0);
    auto frame_of = [&](uint32_t index) {
      if (frame_iid[index] != 0) return frame_iid[index];
      const CpuFrame& f = prof.frames[index];
      auto [it, fresh] = in.frames.try_emplace(cpu_frame_key(f), in.frames.size() + 1);
      if (fresh) {
        const std::string url = sanitized(f.url);
        const std::string path = url.empty() ? "(v8)" : url;
        const size_t paths_before = in.mappings.size();
        const uint64_t path_iid = intern_string(in.mappings, path, interned, 17);
        if (in.mappings.size() != paths_before) {
          Pb m;
          m.uint(1, path_iid);  // iid: one mapping per path, the same iid
          m.uint(7, path_iid);  // path_string_ids
          interned.msg(19, m);
        }
        Pb fr;
        fr.uint(1, it->second);  // iid
        fr.uint(2, intern_string(in.functions, f.function.empty() ? "(anonymous)" : sanitized(f.function),
                                 interned, 5));  // function_name_id
        fr.uint(3, path_iid);    // mapping_id
        fr.uint(4, it->second);  // rel_pc: the frame's own iid, unique in its mapping
        if (!url.empty()) fr.uint(5, intern_string(in.sources, url, interned, 18));  // source_path_iid
        if (f.line >= 0) fr.uint(6, static_cast<uint64_t>(f.line) + 1);           // line_number, 1-based
        interned.msg(6, fr);
      }
      return frame_iid[index] = it->second;
    };
    // Per node: its stack's iid (0 for V8's root, which is no frame).
    std::vector<uint64_t> stack_iid(prof.node_frame.size(), 0);
    std::vector<uint64_t> path;
    for (size_t i = 0; i < prof.node_frame.size(); ++i) {
      const int32_t parent = prof.node_parent[i];
      if (parent < 0) continue;
      const uint64_t caller = stack_iid[static_cast<size_t>(parent)];
      const uint64_t frame = frame_of(prof.node_frame[i]);
      auto [it, fresh] = in.stacks.try_emplace({caller, frame}, in.stacks.size() + 1);
      if (fresh) {
        // Its frames, bottom first: the callers' nodes up to the root.
        path.clear();
        for (int32_t n = static_cast<int32_t>(i); n >= 0 && prof.node_parent[static_cast<size_t>(n)] >= 0;
             n = prof.node_parent[static_cast<size_t>(n)]) {
          path.push_back(frame_of(prof.node_frame[static_cast<size_t>(n)]));
        }
        Pb cs;
        cs.uint(1, it->second);  // iid
        for (auto f = path.rbegin(); f != path.rend(); ++f) cs.uint(2, *f);  // frame_ids
        interned.msg(7, cs);
      }
      stack_iid[i] = it->second;
    }
    // A sample on the root itself (no JavaScript frame): the root's frame alone.
    for (size_t i = 0; i < prof.node_frame.size(); ++i) {
      if (prof.node_parent[i] >= 0) continue;
      const uint64_t frame = frame_of(prof.node_frame[i]);
      auto [it, fresh] = in.stacks.try_emplace({0, frame}, in.stacks.size() + 1);
      if (fresh) {
        Pb cs;
        cs.uint(1, it->second);
        cs.uint(2, frame);
        interned.msg(7, cs);
      }
      stack_iid[i] = it->second;
    }
    if (!interned.s.empty()) {
      Pb body;
      body.uint(10, seq_);
      body.uint(13, kSeqNeedsState);
      body.msg(kInternedDataField, interned);
      packet(body);
    }
    for (size_t k = 0; k < prof.sample_ns.size(); ++k) {
      Pb sample;
      sample.uint(2, pid_);                                  // pid
      sample.uint(3, prof.timeline);                         // tid: the thread track's
      sample.uint(4, stack_iid[prof.sample_node[k]]);        // callstack_iid
      Pb body;
      body.uint(8, ts(prof.sample_ns[k]));  // timestamp
      body.uint(10, seq_);
      body.uint(13, kSeqNeedsState);
      body.msg(kPerfSampleField, sample);
      packet(body);
      boundary();
    }
  }

  void lane_descriptor(const TimelineState& tl, uint32_t lane) {
    Pb td;
    td.uint(1, perfetto_track_uuid(tl.id, lane) ^ salt_);
    td.uint(5, perfetto_track_uuid(tl.id, 0) ^ salt_);
    td.str(2, sanitized(tl.name) + " #" + std::to_string(lane + 1));
    descriptor_packet(td);
  }

  // Writes the length of [len_at + 1, end) at len_at (one byte reserved),
  // widening in place when it needs more; returns the new end.
  static uint8_t* patch_len(uint8_t* len_at, uint8_t* end) {
    const size_t n = static_cast<size_t>(end - (len_at + 1));
    if (n < 0x80) {
      *len_at = static_cast<uint8_t>(n);
      return end;
    }
    const size_t k = varint_size(n);
    std::memmove(len_at + k, len_at + 1, n);
    put_varint(len_at, n);
    return end + (k - 1);
  }

  // implicit_parent: the slice enclosing this one on its track is its
  // parent, which is then not repeated as a parent_id annotation.
  void begin_event(uint32_t timeline, const SpanRecord& r, uint64_t uuid,
                   const std::string* attrs, const LocalIndex<uint64_t>& foreign,
                   bool implicit_parent) {
    attr_buf_.clear();
    if (attrs) encode_attrs(*attrs, attr_buf_, scratch_);
    ensure(128 + 2 * attr_buf_.size() + 16);
    uint8_t* p = at();
    *p++ = kTracePacket;
    uint8_t* packet_len = p++;
    *p++ = kTimestamp;
    p = put_varint(p, ts(r.start_ns));
    *p++ = kSequenceId;
    p = put_varint(p, seq_);
    *p++ = kSequenceFlags;
    *p++ = kSeqNeedsState;
    *p++ = kTrackEvent;
    uint8_t* event_len = p++;
    *p++ = kEventType;
    *p++ = kSliceBegin;
    *p++ = kEventTrackUuid;
    p = put_varint(p, uuid);
    if (r.name < names_known_) {
      *p++ = kEventNameIid;
      p = put_varint(p, static_cast<uint64_t>(r.name) + 1);
    } else {
      p = put_varint(p, kEventNameField << 3 | 2);
      *p++ = 1;
      *p++ = '?';
    }
    const uint64_t span_id = make_span_id(timeline, r.local_id);
    *p++ = kEventAnnotation;
    *p++ = static_cast<uint8_t>(3 + varint_size(span_id));
    *p++ = 0x08;  // name_iid
    *p++ = kIidSpanId;
    *p++ = 0x18;  // uint_value
    p = put_varint(p, span_id);
    uint64_t parent_id = 0;
    if (r.flags & kFlagParentElsewhere) {
      if (const uint64_t* f = foreign.find(r.local_id)) parent_id = *f;
    } else if (r.parent_local != 0 && !implicit_parent) {
      parent_id = make_span_id(timeline, r.parent_local);
    }
    if (parent_id != 0) {
      *p++ = kEventAnnotation;
      *p++ = static_cast<uint8_t>(3 + varint_size(parent_id));
      *p++ = 0x08;
      *p++ = kIidParentId;
      *p++ = 0x18;
      p = put_varint(p, parent_id);
    }
    if (r.flags & (kFlagError | kFlagAbandoned)) {
      for (uint8_t iid : {kIidError, kIidAbandoned}) {
        if (!(r.flags & (iid == kIidError ? kFlagError : kFlagAbandoned))) continue;
        const uint8_t b[6] = {kEventAnnotation, 4, 0x08, iid, 0x10, 1};  // bool_value true
        std::memcpy(p, b, 6);
        p += 6;
      }
    }
    if (!attr_buf_.empty()) {
      std::memcpy(p, attr_buf_.data(), attr_buf_.size());
      p += attr_buf_.size();
    }
    p = patch_len(event_len, p);
    p = patch_len(packet_len, p);
    pos_ = static_cast<size_t>(p - reinterpret_cast<uint8_t*>(&out_[0]));
    boundary();
  }

  void end_event(int64_t end_ns, uint64_t uuid) {
    ensure(40);
    const uint64_t t = ts(end_ns);
    const size_t event_len = 3 + varint_size(uuid);
    const size_t packet_len = 1 + varint_size(t) + 1 + varint_size(seq_) + 2 + event_len;  // < 128
    uint8_t* p = at();
    *p++ = kTracePacket;
    *p++ = static_cast<uint8_t>(packet_len);
    *p++ = kTimestamp;
    p = put_varint(p, t);
    *p++ = kSequenceId;
    p = put_varint(p, seq_);
    *p++ = kTrackEvent;
    *p++ = static_cast<uint8_t>(event_len);
    *p++ = kEventType;
    *p++ = kSliceEnd;
    *p++ = kEventTrackUuid;
    p = put_varint(p, uuid);
    pos_ += 2 + packet_len;
    boundary();
  }

  // Thread and group timelines: slices nest by begin order and depth, and
  // records arrive in end order, so a tree is written once its root (depth
  // 0) has arrived: the records up to the last root are whole trees, the
  // rest wait in `pending`. `last` (a whole snapshot): all are written now.
  template <typename TimelineT>
  void stack_append(TimelineState& st, const TimelineT& tl, bool last) {
    const auto& recs = tl.records;
    const size_t n = recs.size();
    if (st.pending.empty()) {
      const size_t k = last ? n : whole_trees(recs, n);
      if (k > 0) stack_spans(st, recs, k, tl.attrs, tl.foreign_parents);
      if (k < n) keep_pending(st, recs, k, tl.attrs, tl.foreign_parents);
      return;
    }
    keep_pending(st, recs, 0, tl.attrs, tl.foreign_parents);
    const size_t k = last ? st.pending.size() : whole_trees(st.pending, st.pending.size());
    if (k == 0) return;
    stack_spans(st, st.pending, k, st.pending_attrs, st.pending_foreign);
    drop_pending(st, k);
  }

  // How many of recs[0, n) are whole trees that may be written now: those up
  // to the last root, if every one of them began before every later record
  // (so their begin order is not changed by what follows).
  template <typename Records>
  static size_t whole_trees(const Records& recs, size_t n) {
    size_t k = n;
    while (k > 0 && recs[static_cast<uint32_t>(k - 1)].depth != 0) --k;
    if (k == 0 || k == n) return k;
    uint32_t max_before = 0, min_after = 0xFFFFFFFFu;
    for (size_t i = 0; i < k; ++i) max_before = std::max(max_before, local_at(recs, static_cast<uint32_t>(i)));
    for (size_t i = k; i < n; ++i) min_after = std::min(min_after, local_at(recs, static_cast<uint32_t>(i)));
    return max_before < min_after ? k : 0;
  }

  // Keeps recs[from, n) (and their attributes and foreign parents: those of
  // local ids from the smallest kept one on, as the earlier ones are
  // smaller) for a later batch.
  template <typename Records>
  static void keep_pending(TimelineState& st, const Records& recs, size_t from,
                           const std::vector<std::pair<uint32_t, std::string>>& attrs,
                           const std::vector<std::pair<uint32_t, uint64_t>>& foreign) {
    uint32_t min_kept = 0xFFFFFFFFu;
    for (size_t i = from; i < recs.size(); ++i) {
      const SpanRecord r = recs[static_cast<uint32_t>(i)];
      min_kept = std::min(min_kept, r.local_id);
      st.pending.push_back(r);
    }
    const uint32_t low = from == 0 ? 0 : min_kept;
    for (const auto& a : attrs)
      if (a.first >= low) st.pending_attrs.push_back(a);
    for (const auto& f : foreign)
      if (f.first >= low) st.pending_foreign.push_back(f);
  }

  static void drop_pending(TimelineState& st, size_t k) {
    st.pending.erase(st.pending.begin(), st.pending.begin() + static_cast<ptrdiff_t>(k));
    if (st.pending.empty()) {
      clear_pending(st);
      return;
    }
    uint32_t low = 0xFFFFFFFFu;
    for (const SpanRecord& r : st.pending) low = std::min(low, r.local_id);
    auto below = [low](const auto& e) { return e.first < low; };
    st.pending_attrs.erase(std::remove_if(st.pending_attrs.begin(), st.pending_attrs.end(), below),
                           st.pending_attrs.end());
    st.pending_foreign.erase(std::remove_if(st.pending_foreign.begin(), st.pending_foreign.end(), below),
                             st.pending_foreign.end());
  }

  static void clear_pending(TimelineState& st) {
    st.pending.clear();
    st.pending_attrs.clear();
    st.pending_foreign.clear();
  }

  // recs[0, n) of a thread or group timeline: begin order with depth
  // closing siblings; every slice is ended by the return.
  template <typename Records>
  void stack_spans(const TimelineState& st, const Records& recs, size_t n,
                   const std::vector<std::pair<uint32_t, std::string>>& attr_list,
                   const std::vector<std::pair<uint32_t, uint64_t>>& foreign_list) {
    const std::vector<uint32_t> order = begin_order(recs, n);
    LocalIndex<std::string> attrs(attr_list, n);
    LocalIndex<uint64_t> foreign(foreign_list, n);
    const uint64_t uuid = perfetto_track_uuid(st.id, 0) ^ salt_;
    // What the open slices' ends need, so each record is read once.
    std::vector<Open>& open = open_;
    open.clear();
    for (uint32_t i : order) {
      const SpanRecord r = recs[i];
      while (!open.empty() && open.back().depth >= r.depth) {
        end_event(open.back().end_ns, uuid);
        open.pop_back();
      }
      const bool implicit_parent = !open.empty() && !(r.flags & kFlagParentElsewhere) &&
                                   open.back().local_id == r.parent_local;
      begin_event(st.id, r, uuid, attrs.find(r.local_id), foreign, implicit_parent);
      open.push_back(Open{r.end_ns, r.local_id, r.depth});
    }
    while (!open.empty()) {
      end_event(open.back().end_ns, uuid);
      open.pop_back();
    }
  }

  // A batch of a track's records: greedy lanes (see the top of the file).
  // Each batch's slices are ended within it; each lane's end carries over to
  // the next batch (whose spans may start earlier than this one's), so a
  // later span never lands on a lane inside an earlier one it does not
  // belong to.
  template <typename Records>
  void track_spans(TimelineState& st, const Records& records, size_t,
                   const std::vector<std::pair<uint32_t, std::string>>& attr_list,
                   const std::vector<std::pair<uint32_t, uint64_t>>& foreign_list) {
    SpanRecords copy;
    const SpanRecords& recs = track_records(records, copy);
    const std::vector<uint32_t> by_local = begin_order(recs, recs.size());
    std::vector<uint32_t> order = by_local;
    auto before = [&](uint32_t a, uint32_t b) {
      const SpanRecord& x = recs[a];
      const SpanRecord& y = recs[b];
      if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
      if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
      return x.local_id < y.local_id;
    };
    if (!std::is_sorted(order.begin(), order.end(), before)) std::sort(order.begin(), order.end(), before);

    // Plan: (record index, lane, is_end) in emission order.
    struct Step {
      uint32_t rec;
      uint32_t lane;
      bool end;
    };
    std::vector<Step> steps;
    steps.reserve(2 * order.size());
    std::vector<std::vector<uint32_t>> stacks(st.lane_end.size());  // per lane: open record indexes
    using Busy = std::pair<int64_t, uint32_t>;  // (end of the lane's bottom span, lane)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<Busy>> busy;
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> free_lanes;
    for (uint32_t lane = 0; lane < st.lane_end.size(); ++lane) busy.emplace(st.lane_end[lane], lane);
    // A span's lane once placed; a parent ordered after its child (it starts
    // later, or at the same time and ends sooner) is not placed yet.
    constexpr uint32_t kNoLane = 0xFFFFFFFFu;
    std::vector<uint32_t> lane_at(recs.size(), kNoLane);
    auto flush_lane = [&](uint32_t lane) {
      std::vector<uint32_t>& stack = stacks[lane];
      while (!stack.empty()) {
        steps.push_back({stack.back(), lane, true});
        stack.pop_back();
      }
    };
    // The record index of a span of this batch by local id (by_local is in
    // local id order), or kNoRecord.
    constexpr uint32_t kNoRecord = 0xFFFFFFFFu;
    auto find_local = [&](uint32_t local) {
      auto it = std::lower_bound(by_local.begin(), by_local.end(), local,
                                 [&](uint32_t i, uint32_t l) { return recs[i].local_id < l; });
      return it != by_local.end() && recs[*it].local_id == local ? *it : kNoRecord;
    };
    for (uint32_t i : order) {
      const SpanRecord& r = recs[i];
      while (!busy.empty() && busy.top().first <= r.start_ns) {
        const uint32_t lane = busy.top().second;
        busy.pop();
        flush_lane(lane);
        free_lanes.push(lane);
      }
      // Nest on the parent's lane when the parent is this track's and is
      // the innermost span open there once the ended ones close, and it
      // contains this span; an unrelated span never nests.
      const uint32_t parent =
          r.parent_local != 0 && !(r.flags & kFlagParentElsewhere) ? find_local(r.parent_local) : kNoRecord;
      bool placed = false;
      uint32_t lane = 0;
      if (parent != kNoRecord && lane_at[parent] != kNoLane) {
        lane = lane_at[parent];
        std::vector<uint32_t>& stack = stacks[lane];
        while (!stack.empty() && stack.back() != parent && recs[stack.back()].end_ns <= r.start_ns) {
          steps.push_back({stack.back(), lane, true});
          stack.pop_back();
        }
        const SpanRecord& p = recs[parent];
        placed = !stack.empty() && stack.back() == parent && p.start_ns <= r.start_ns && r.end_ns <= p.end_ns;
      }
      if (!placed) {
        if (!free_lanes.empty()) {
          lane = free_lanes.top();
          free_lanes.pop();
        } else {
          lane = static_cast<uint32_t>(stacks.size());
          stacks.emplace_back();
          st.lane_end.push_back(0);
        }
        busy.emplace(r.end_ns, lane);
        st.lane_end[lane] = r.end_ns;
      }
      lane_at[i] = lane;
      stacks[lane].push_back(i);
      steps.push_back({i, lane, false});
    }
    for (uint32_t lane = 0; lane < stacks.size(); ++lane) flush_lane(lane);
    for (; st.described_lanes < st.lane_end.size(); ++st.described_lanes) lane_descriptor(st, st.described_lanes);
    LocalIndex<std::string> attrs(attr_list, recs.size());
    LocalIndex<uint64_t> foreign(foreign_list, recs.size());
    for (const Step& s : steps) {
      const SpanRecord& r = recs[s.rec];
      const uint64_t uuid = perfetto_track_uuid(st.id, s.lane) ^ salt_;
      if (s.end) {
        end_event(r.end_ns, uuid);
      } else {
        begin_event(st.id, r, uuid, attrs.find(r.local_id), foreign, false);
      }
    }
  }

  const int64_t origin_;
  const ClockReadings clocks_;
  const uint32_t pid_;
  const std::string process_name_;
  const uint32_t seq_;     // trusted_packet_sequence_id (perfetto_writer.h)
  const uint64_t salt_;    // xored into every track uuid
  DocumentCounts counts_;
  std::string block_;  // the scratch block, with a sink
  std::string& out_;
  BlockSink* const sink_;
  size_t pos_ = 0;
  size_t block_size_ = 0;  // what the buffer is sized to up front
  bool header_sent_ = false;
  size_t names_sent_ = 0;   // names interned so far in this file
  size_t names_known_ = 0;  // the current batch's name table size
  std::map<uint32_t, TimelineState> timelines_;
  // Counter series by name: their track uuid (in order of first sight) and drops so far.
  struct CounterState {
    uint64_t uuid = 0;
    uint64_t dropped = 0;
  };
  std::map<std::string, CounterState> counters_;
  CpuInterned interned_;    // what CPU samples have interned in this file
  uint64_t cpu_dropped_ = 0;  // samples the store refused (cumulative)
  std::vector<Open> open_;
  std::string attr_buf_;
  AttrScratch scratch_;
};

PerfettoWriter::PerfettoWriter(const DocumentInfo& doc, std::string& out) : doc_(doc), out_(&out), sink_(nullptr) {}
PerfettoWriter::PerfettoWriter(const DocumentInfo& doc, BlockSink& sink) : doc_(doc), out_(nullptr), sink_(&sink) {}
PerfettoWriter::~PerfettoWriter() = default;
PerfettoWriter::Impl& PerfettoWriter::current() {
  if (current_ == nullptr) {
    // The document's counts go with its first process (a reader sums the processes').
    DocumentInfo d = doc_;
    if (!impls_.empty()) d.counts = {};
    impls_.push_back(std::make_unique<Impl>(d, out_, sink_));
    pids_.push_back(doc_.pid);
    current_ = impls_.back().get();
  }
  return *current_;
}
void PerfettoWriter::append(const Snapshot& batch, bool last) { current().append(batch, last); }
void PerfettoWriter::append(const FrozenSnapshot& batch, bool last) { current().append(batch, last); }
void PerfettoWriter::finish() {
  if (impls_.empty()) current();
  for (auto& impl : impls_) impl->finish();
}
void PerfettoWriter::restart() {
  for (auto& impl : impls_) impl->restart();
}
void PerfettoWriter::set_counts(DocumentCounts counts) {
  if (!impls_.empty()) impls_.front()->set_counts(counts);
  doc_.counts = std::move(counts);
}
void PerfettoWriter::set_process(uint32_t pid, std::string name) {
  doc_.pid = pid;
  doc_.process_name = std::move(name);
  current_ = nullptr;
  for (size_t k = 0; k < pids_.size(); ++k) {
    if (pids_[k] == pid) current_ = impls_[k].get();
  }
}

namespace {
template <typename SnapshotT, typename Out>
void write_whole(const SnapshotT& snapshot, const DocumentInfo& doc, Out& out) {
  write_document<PerfettoWriter>(snapshot, doc, out);
}
template <typename SnapshotT, typename Out>
void write_whole(const SnapshotT& snapshot, int64_t origin_ns, const ClockReadings& clocks, Out& out) {
  write_whole(snapshot, DocumentInfo{origin_ns, clocks, {}}, out);
}
}  // namespace

void write_perfetto(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks, std::string& out) {
  write_whole(snapshot, origin_ns, clocks, out);
}
void write_perfetto(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks, BlockSink& sink) {
  write_whole(snapshot, origin_ns, clocks, sink);
}
void write_perfetto(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                    std::string& out) {
  write_whole(snapshot, origin_ns, clocks, out);
}
void write_perfetto(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                    BlockSink& sink) {
  write_whole(snapshot, origin_ns, clocks, sink);
}

void write_perfetto(const Snapshot& snapshot, const DocumentInfo& doc, std::string& out) {
  write_whole(snapshot, doc, out);
}
void write_perfetto(const FrozenSnapshot& snapshot, const DocumentInfo& doc, std::string& out) {
  write_whole(snapshot, doc, out);
}
void write_perfetto(const FrozenSnapshot& snapshot, const DocumentInfo& doc, BlockSink& sink) {
  write_whole(snapshot, doc, sink);
}
void write_perfetto(const Snapshot& snapshot, const DocumentInfo& doc, BlockSink& sink) {
  write_whole(snapshot, doc, sink);
}

}  // namespace hotspan
