// Perfetto writer: varint edge cases, and documents taken apart by a tiny
// protobuf decoder (field numbers from perfetto_trace.proto) to check the
// structure: interned data, descriptors, begin/end nesting, lanes for
// overlapping async spans, annotations, widened lengths, UTF-8 repair.
// test/perfetto.test.ts decodes whole documents with the .proto itself.
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "check.h"
#include "write/perfetto_writer.h"
#include "write/proto_wire.h"
#include "snapshot_builders.h"

namespace {

using namespace hotspan;

// ---- a tiny decoder: one message -> (field, value) list ----

struct Field {
  uint32_t num = 0;
  uint32_t wire = 0;
  uint64_t v = 0;     // varint / fixed64
  std::string bytes;  // LEN
};

bool get_varint(const std::string& s, size_t& i, uint64_t* v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (i >= s.size()) return false;
    uint8_t b = static_cast<uint8_t>(s[i++]);
    r |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}

std::vector<Field> decode(const std::string& s) {
  std::vector<Field> out;
  size_t i = 0;
  while (i < s.size()) {
    uint64_t key;
    Field f;
    if (!get_varint(s, i, &key)) {
      check::fail(__FILE__, __LINE__, "bad key varint");
      return out;
    }
    f.num = static_cast<uint32_t>(key >> 3);
    f.wire = static_cast<uint32_t>(key & 7);
    if (f.wire == 0) {
      if (!get_varint(s, i, &f.v)) check::fail(__FILE__, __LINE__, "bad varint");
    } else if (f.wire == 1) {
      if (i + 8 > s.size()) {
        check::fail(__FILE__, __LINE__, "truncated fixed64");
        return out;
      }
      std::memcpy(&f.v, s.data() + i, 8);
      i += 8;
    } else if (f.wire == 2) {
      uint64_t n;
      if (!get_varint(s, i, &n) || i + n > s.size()) {
        check::fail(__FILE__, __LINE__, "bad length");
        return out;
      }
      f.bytes = s.substr(i, n);
      i += n;
    } else {
      check::fail(__FILE__, __LINE__, "unexpected wire type");
      return out;
    }
    out.push_back(f);
  }
  return out;
}

const Field* first(const std::vector<Field>& fs, uint32_t num) {
  for (const Field& f : fs)
    if (f.num == num) return &f;
  return nullptr;
}
std::vector<const Field*> all(const std::vector<Field>& fs, uint32_t num) {
  std::vector<const Field*> out;
  for (const Field& f : fs)
    if (f.num == num) out.push_back(&f);
  return out;
}

using hotspan_test::rec;
using hotspan_test::timeline;

void test_varint() {
  struct Case {
    uint64_t v;
    std::vector<uint8_t> bytes;
  };
  const std::vector<Case> cases = {
      {0, {0x00}},
      {1, {0x01}},
      {127, {0x7F}},
      {128, {0x80, 0x01}},
      {300, {0xAC, 0x02}},
      {16383, {0xFF, 0x7F}},
      {16384, {0x80, 0x80, 0x01}},
      {0xFFFFFFFFull, {0xFF, 0xFF, 0xFF, 0xFF, 0x0F}},
      {1ull << 32, {0x80, 0x80, 0x80, 0x80, 0x10}},
      {1ull << 63, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
      {~0ull, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}},
      // int64 -1 as a protobuf int64: two's complement, 10 bytes.
      {static_cast<uint64_t>(int64_t{-1}), {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}},
  };
  for (const Case& c : cases) {
    uint8_t buf[16];
    uint8_t* end = proto_wire::put_varint(buf, c.v);
    std::vector<uint8_t> got(buf, end);
    CHECK(got == c.bytes);
    CHECK_EQ(proto_wire::varint_size(c.v), c.bytes.size());
    std::string s(reinterpret_cast<char*>(buf), got.size());
    size_t i = 0;
    uint64_t back = 0;
    CHECK(get_varint(s, i, &back));
    CHECK_EQ(back, c.v);
  }
  // Every size boundary: 2^(7k) - 1 and 2^(7k).
  for (int k = 1; k <= 9; ++k) {
    const uint64_t b = 1ull << (7 * k);
    CHECK_EQ(proto_wire::varint_size(b - 1), static_cast<size_t>(k));
    CHECK_EQ(proto_wire::varint_size(b), static_cast<size_t>(k + 1));
  }
}

struct Event {
  uint64_t ts;
  uint64_t type;
  uint64_t uuid;
  uint64_t name_iid;
  std::vector<Field> packet;
  std::vector<Field> event;
};

struct Doc {
  std::vector<std::vector<Field>> packets;
  std::map<uint64_t, std::string> names;           // iid -> event name
  std::map<uint64_t, std::vector<Field>> tracks;   // uuid -> TrackDescriptor fields
  std::vector<Event> events;
};

Doc parse(const std::string& bytes, uint64_t sequence = kPerfettoSequenceId) {
  Doc d;
  for (const Field& p : decode(bytes)) {
    CHECK_EQ(p.num, 1u);
    CHECK_EQ(p.wire, 2u);
    d.packets.push_back(decode(p.bytes));
  }
  for (const auto& pk : d.packets) {
    const Field* seq = first(pk, 10);
    CHECK(seq && seq->v == sequence);
    if (const Field* in = first(pk, 12)) {
      const std::vector<Field> interned = decode(in->bytes);  // outlives the pointers into it
      for (const Field* en : all(interned, 2)) {
        auto e = decode(en->bytes);
        d.names[first(e, 1)->v] = first(e, 2)->bytes;
      }
    }
    if (const Field* td = first(pk, 60)) {
      auto t = decode(td->bytes);
      d.tracks[first(t, 1)->v] = t;
    }
    if (const Field* te = first(pk, 11)) {
      Event ev;
      ev.packet = pk;
      ev.event = decode(te->bytes);
      ev.ts = first(pk, 8)->v;
      ev.type = first(ev.event, 9)->v;
      ev.uuid = first(ev.event, 11)->v;
      const Field* n = first(ev.event, 10);
      ev.name_iid = n ? n->v : 0;
      d.events.push_back(ev);
    }
  }
  return d;
}

// annotation name (interned iid or string) -> fields of the annotation
std::map<std::string, std::vector<Field>> annotations(const Event& ev) {
  static const char* const kNames[] = {"", "span_id", "parent_id", "error", "abandoned"};
  std::map<std::string, std::vector<Field>> out;
  for (const Field* a : all(ev.event, 4)) {
    auto f = decode(a->bytes);
    std::string name;
    if (const Field* iid = first(f, 1)) {
      name = iid->v < 5 ? kNames[iid->v] : "?";
    } else {
      name = first(f, 10)->bytes;
    }
    out[name] = f;
  }
  return out;
}

// Begin/end pairs must nest per track; returns the begin events in order
// of their end, each with its end timestamp.
void check_nesting(const Doc& d) {
  std::map<uint64_t, std::vector<uint64_t>> open;  // uuid -> begin ts stack
  for (const Event& ev : d.events) {
    CHECK(d.tracks.count(ev.uuid) == 1);
    if (ev.type == 1) {
      auto& st = open[ev.uuid];
      if (!st.empty()) CHECK(st.back() <= ev.ts);
      st.push_back(ev.ts);
    } else {
      CHECK_EQ(ev.type, 2u);
      auto& st = open[ev.uuid];
      CHECK(!st.empty());
      if (!st.empty()) {
        CHECK(st.back() <= ev.ts);
        st.pop_back();
      }
    }
  }
  for (const auto& [uuid, st] : open) CHECK(st.empty());
}

void test_structure() {
  const int64_t origin = 5000000000;
  const uint64_t off = kPerfettoTimestampOffsetNs;
  Snapshot s;
  s.names = {"outer", "inner", "io", "phase", std::string("bad\xff", 4)};

  SnapshotTimeline main = timeline(1, "main", TimelineKind::kJs);
  // End order: inner first. Inner has attributes and the error flag.
  main.records.push_back(rec(2, 1, 1, origin + 100, origin + 200, 1, kFlagAttrs | kFlagError));
  main.records.push_back(rec(3, 1, 4, origin + 200, origin + 250, 1));  // sibling, starts at inner's end
  main.records.push_back(rec(1, 0, 0, origin + 50, origin + 300, 0, kFlagAbandoned));
  main.attrs = {{2, "{\"rows\":12,\"ratio\":0.5,\"table\":\"u\\u00e9\\ud83d\\ude00\",\"hit\":true,"
                    "\"neg\":-7,\"nested\":{\"a\":[1,2]},\"big\":1e300}"}};
  s.timelines.push_back(main);

  SnapshotTimeline groups = timeline(2, "groups", TimelineKind::kGroups);
  groups.records.push_back(rec(1, 0, 3, origin - 10, origin + 400));
  s.timelines.push_back(groups);

  // Concurrent track: a [0,100] and b [50,150] overlap; c [60,90] lies inside
  // both but is neither's child: a lane of its own. e [70,80] is b's child:
  // nested under b on b's lane.
  SnapshotTimeline track = timeline(3, "track: io", TimelineKind::kTrack);
  track.records.push_back(rec(1, 0, 2, origin + 1000, origin + 1100, 0, kFlagAsync | kFlagParentElsewhere));
  track.records.push_back(rec(3, 0, 2, origin + 1060, origin + 1090, 0, kFlagAsync));
  track.records.push_back(rec(5, 2, 2, origin + 1070, origin + 1080, 1, kFlagAsync));
  track.records.push_back(rec(2, 0, 2, origin + 1050, origin + 1150, 0, kFlagAsync));
  track.records.push_back(rec(4, 0, 2, origin + 1200, origin + 1300, 0, kFlagAsync));
  track.foreign_parents = {{1, make_span_id(1, 1)}};
  s.timelines.push_back(track);

  SnapshotTimeline empty = timeline(4, "native 1", TimelineKind::kNative);
  s.timelines.push_back(empty);

  std::string out = "prefix";
  write_perfetto(s, origin, hotspan_test::kTestClocks, out);
  CHECK(out.compare(0, 6, "prefix") == 0);
  Doc d = parse(out.substr(6));

  // First packet: incremental state cleared, interned names, process track.
  const auto& p0 = d.packets.at(0);
  CHECK(first(p0, 13) && first(p0, 13)->v == 1);
  CHECK_EQ(d.names.size(), s.names.size());
  CHECK_EQ(d.names[1], std::string("outer"));
  CHECK_EQ(d.names[5], std::string("bad\xEF\xBF\xBD"));
  CHECK(d.tracks.count(kPerfettoProcessUuid) == 1);

  // Thread descriptors with names; tracks under the process.
  {
    auto th = decode(first(d.tracks[1], 4)->bytes);
    CHECK_EQ(first(th, 1)->v, 1u);
    CHECK_EQ(first(th, 2)->v, 1u);
    CHECK_EQ(first(th, 5)->bytes, std::string("main"));
    auto th4 = decode(first(d.tracks[4], 4)->bytes);
    CHECK_EQ(first(th4, 5)->bytes, std::string("native 1"));
    CHECK_EQ(first(d.tracks[2], 2)->bytes, std::string("groups"));
    CHECK_EQ(first(d.tracks[2], 5)->v, kPerfettoProcessUuid);
    CHECK_EQ(first(d.tracks[3], 2)->bytes, std::string("track: io"));
  }

  check_nesting(d);
  CHECK_EQ(d.events.size(), 2u * (3 + 1 + 5));

  // Main timeline: outer begin, inner begin, inner end, phase begin, phase end, outer end.
  std::vector<std::pair<uint64_t, uint64_t>> main_seq;  // type, ts
  for (const Event& ev : d.events)
    if (ev.uuid == 1) main_seq.emplace_back(ev.type, ev.ts);
  const std::vector<std::pair<uint64_t, uint64_t>> want = {
      {1, off + 50}, {1, off + 100}, {2, off + 200}, {1, off + 200}, {2, off + 250}, {2, off + 300}};
  CHECK(main_seq == want);

  const Event* inner = nullptr;
  const Event* outer = nullptr;
  for (const Event& ev : d.events) {
    if (ev.type != 1) continue;
    CHECK(first(ev.packet, 13) && first(ev.packet, 13)->v == 2);
    if (ev.uuid == 1 && ev.name_iid == 2) inner = &ev;
    if (ev.uuid == 1 && ev.name_iid == 1) outer = &ev;
  }
  CHECK(inner && outer);
  if (inner) {
    auto a = annotations(*inner);
    CHECK_EQ(first(a["span_id"], 3)->v, make_span_id(1, 2));
    // Its parent is the slice enclosing it on the track: no parent_id.
    CHECK(a.count("parent_id") == 0);
    CHECK_EQ(first(a["error"], 2)->v, 1u);
    CHECK(a.count("abandoned") == 0);
    CHECK_EQ(first(a["rows"], 4)->v, 12u);
    CHECK_EQ(static_cast<int64_t>(first(a["neg"], 4)->v), int64_t{-7});
    double ratio = 0;
    std::memcpy(&ratio, &first(a["ratio"], 5)->v, 8);
    CHECK_EQ(ratio, 0.5);
    CHECK_EQ(first(a["table"], 6)->bytes, std::string("u\xC3\xA9\xF0\x9F\x98\x80"));
    CHECK_EQ(first(a["hit"], 2)->v, 1u);
    CHECK_EQ(first(a["nested"], 9)->bytes, std::string("{\"a\":[1,2]}"));
    double big = 0;
    std::memcpy(&big, &first(a["big"], 5)->v, 8);
    CHECK_EQ(big, 1e300);
  }
  if (outer) {
    auto a = annotations(*outer);
    CHECK(a.count("parent_id") == 0);
    CHECK_EQ(first(a["abandoned"], 2)->v, 1u);
  }

  // Groups: before the origin by 10 ns, exact thanks to the offset.
  for (const Event& ev : d.events)
    if (ev.uuid == 2 && ev.type == 1) CHECK_EQ(ev.ts, off - 10);

  // Track lanes: a (1) and d (4) on the track itself, b (2) and its child e
  // (5) on lane 1, the unrelated c (3) on lane 2.
  std::map<uint64_t, std::vector<uint64_t>> lane_spans;  // uuid -> span local ids (begins)
  for (const Event& ev : d.events) {
    if (ev.type != 1 || (ev.uuid & 0xFFFFFFFFu) != 3) continue;
    lane_spans[ev.uuid].push_back(first(annotations(ev)["span_id"], 3)->v & 0xFFFFFFFFu);
  }
  CHECK(lane_spans[3] == (std::vector<uint64_t>{1, 4}));
  CHECK(lane_spans[perfetto_track_uuid(3, 1)] == (std::vector<uint64_t>{2, 5}));
  CHECK(lane_spans[perfetto_track_uuid(3, 2)] == (std::vector<uint64_t>{3}));
  CHECK(d.tracks.count(perfetto_track_uuid(3, 1)) == 1);
  CHECK_EQ(first(d.tracks[perfetto_track_uuid(3, 1)], 2)->bytes, std::string("track: io #2"));
  CHECK_EQ(first(d.tracks[perfetto_track_uuid(3, 1)], 5)->v, 3u);
  for (const Event& ev : d.events) {
    if (ev.type == 1 && ev.uuid == 3 && ev.ts == off + 1000) {
      CHECK_EQ(first(annotations(ev)["parent_id"], 3)->v, make_span_id(1, 1));
    }
  }
}

// parent_id is written when the enclosing slice is not the parent: here the
// parent is still open (not in the snapshot) and an earlier root is the
// innermost slice left open in the replay.
void test_parent_not_enclosing() {
  Snapshot s;
  s.names = {"n"};
  SnapshotTimeline t = timeline(1, "t", TimelineKind::kJs);
  t.records.push_back(rec(1, 0, 0, 10, 20, 0));
  t.records.push_back(rec(3, 2, 0, 40, 50, 1));  // parent 2 not committed yet
  t.records.push_back(rec(5, 4, 0, 70, 80, 1));  // parent 4 below, enclosing
  t.records.push_back(rec(4, 0, 0, 60, 90, 0));
  s.timelines.push_back(t);
  std::string out;
  write_perfetto(s, 0, hotspan_test::kTestClocks, out);
  const Doc d = parse(out);
  std::map<uint64_t, std::map<std::string, std::vector<Field>>> by_local;
  for (const Event& ev : d.events) {
    if (ev.type != 1) continue;
    auto a = annotations(ev);
    by_local[first(a["span_id"], 3)->v & 0xFFFFFFFFu] = a;
  }
  CHECK_EQ(by_local.size(), size_t{4});
  CHECK(by_local[3].count("parent_id") == 1 && first(by_local[3]["parent_id"], 3)->v == make_span_id(1, 2));
  CHECK(by_local[5].count("parent_id") == 0);
  CHECK(by_local[1].count("parent_id") == 0 && by_local[4].count("parent_id") == 0);
}

// A track span whose parent on the same track is ordered after it (same
// start, the parent ends first) takes a lane of its own: the parent has no
// lane yet to nest on.
void test_parent_ordered_after_child() {
  Snapshot s;
  s.names = {"n"};
  SnapshotTimeline t = timeline(1, "track: t", TimelineKind::kTrack);
  t.records.push_back(rec(2, 0, 0, 10, 20, 0, kFlagAsync));
  t.records.push_back(rec(1, 2, 0, 10, 30, 1, kFlagAsync));
  s.timelines.push_back(t);
  std::string out;
  write_perfetto(s, 0, hotspan_test::kTestClocks, out);
  const Doc d = parse(out);
  check_nesting(d);
  std::map<uint64_t, uint64_t> lane_of;  // local id -> track uuid
  for (const Event& ev : d.events)
    if (ev.type == 1) lane_of[first(annotations(ev)["span_id"], 3)->v & 0xFFFFFFFFu] = ev.uuid;
  CHECK_EQ(lane_of.size(), size_t{2});
  CHECK(lane_of[1] == 1 && lane_of[2] == perfetto_track_uuid(1, 1));
}

void test_edge_cases() {
  Snapshot s;
  s.names = {"n"};
  SnapshotTimeline t = timeline(1, "t", TimelineKind::kJs);
  // A long attribute object: lengths past 127 bytes are widened in place.
  std::string long_value(300, 'x');
  t.records.push_back(rec(1, 0, 0, 10, 20, 0, kFlagAttrs));
  t.records.push_back(rec(2, 0, 7, 30, 40, 0, kFlagAttrs));  // unknown name id
  t.records.push_back(rec(3, 0, 0, -5000000000, 50));          // before origin - offset: clamped
  t.attrs = {{1, "{\"long\":\"" + long_value + "\"}"}, {2, "not json"}};
  s.timelines.push_back(t);
  std::string out;
  write_perfetto(s, 0, hotspan_test::kTestClocks, out);
  Doc d = parse(out);
  check_nesting(d);
  bool saw_long = false, saw_raw = false, saw_clamped = false;
  for (const Event& ev : d.events) {
    if (ev.type != 1) continue;
    auto a = annotations(ev);
    if (a.count("long")) saw_long = first(a["long"], 6)->bytes == long_value;
    if (a.count("attrs")) {
      saw_raw = first(a["attrs"], 6)->bytes == "not json";
      CHECK(ev.name_iid == 0);
      CHECK_EQ(first(ev.event, 23)->bytes, std::string("?"));
    }
    if (ev.ts == 0) saw_clamped = true;
  }
  CHECK(saw_long);
  CHECK(saw_raw);
  CHECK(saw_clamped);

  // An empty snapshot: the header and process track packets only.
  std::string e;
  write_perfetto(Snapshot{}, 0, hotspan_test::kTestClocks, e);
  Doc de = parse(e);
  CHECK_EQ(de.packets.size(), 2u);
  CHECK(de.events.empty());
}

// The clock: span timestamps are on the sequence's clock 64 (the first
// packet's trace_packet_defaults), which a ClockSnapshot in that packet ties
// to MONOTONIC, BOOTTIME and REALTIME; with no BOOTTIME reading, MONOTONIC is
// named the trace clock.
void test_clock() {
  const int64_t origin = 5000000000;
  for (const bool boot : {true, false}) {
    ClockReadings clocks = hotspan_test::kTestClocks;
    if (!boot) clocks.boottime_ns = -1;
    std::string out;
    write_perfetto(Snapshot{}, origin, clocks, out);
    const auto p0 = decode(decode(out).at(0).bytes);
    CHECK_EQ(first(p0, 10)->v, uint64_t{kPerfettoSequenceId});
    CHECK_EQ(first(decode(first(p0, 59)->bytes), 58)->v, uint64_t{kPerfettoClockId});
    const auto snap = decode(first(p0, 6)->bytes);
    std::map<uint64_t, uint64_t> got;
    for (const Field* c : all(snap, 1)) {
      const auto f = decode(c->bytes);
      got[first(f, 1)->v] = first(f, 2)->v;
    }
    std::map<uint64_t, uint64_t> want = {
        {kPerfettoClockId, static_cast<uint64_t>(clocks.monotonic_ns - origin + kPerfettoTimestampOffsetNs)},
        {kPerfettoMonotonic, static_cast<uint64_t>(clocks.monotonic_ns)},
        {kPerfettoRealtime, static_cast<uint64_t>(clocks.realtime_ns)}};
    if (boot) want[kPerfettoBoottime] = static_cast<uint64_t>(clocks.boottime_ns);
    CHECK(got == want);
    const Field* primary = first(snap, 2);
    CHECK(boot ? primary == nullptr : primary != nullptr && primary->v == kPerfettoMonotonic);
  }
}

// Documents of two processes (DocumentInfo::pid) concatenate into one
// trace: each on the sequence of its pid, its process descriptor naming the
// pid, its thread descriptors under it, and no track uuid in both.
void test_processes() {
  const int64_t origin = 5000000000;
  Snapshot s;
  s.names = {"work", "io"};
  SnapshotTimeline main = timeline(1, "main", TimelineKind::kJs);
  main.records.push_back(rec(1, 0, 0, origin + 10, origin + 20, 0));
  s.timelines.push_back(main);
  SnapshotTimeline track = timeline(2, "track: io", TimelineKind::kTrack);
  track.records.push_back(rec(1, 0, 1, origin + 10, origin + 30, 0, kFlagAsync));
  track.records.push_back(rec(2, 0, 1, origin + 20, origin + 40, 0, kFlagAsync));  // a second lane
  s.timelines.push_back(track);
  s.counters.push_back(CounterSeries{"delay", {{origin + 5, 1.5}}, 0});

  std::map<uint64_t, uint32_t> owner;  // track uuid -> pid
  for (const uint32_t pid : {1u, 4242u, 4243u}) {
    std::string out;
    write_perfetto(s, DocumentInfo{origin, hotspan_test::kTestClocks, document_counts(total_counts(s)), pid}, out);
    const Doc d = parse(out, perfetto_sequence_id(pid));
    const uint64_t salt = perfetto_uuid_salt(pid);
    CHECK(pid == 1 ? salt == 0 : salt != 0);
    const auto proc = d.tracks.find(kPerfettoProcessUuid ^ salt);
    CHECK(proc != d.tracks.end());
    CHECK_EQ(first(decode(first(proc->second, 3)->bytes), 1)->v, uint64_t{pid});
    CHECK(first(decode(first(proc->second, 3)->bytes), 6)->bytes == "hotspan");  // the default name
    const auto th = d.tracks.find(perfetto_track_uuid(1, 0) ^ salt);
    CHECK(th != d.tracks.end());
    CHECK_EQ(first(decode(first(th->second, 4)->bytes), 1)->v, uint64_t{pid});
    CHECK_EQ(d.tracks.size(), 6u);  // process, counts, thread, track, its lane, counter
    for (const auto& [uuid, fields] : d.tracks) {
      CHECK(owner.count(uuid) == 0);
      owner[uuid] = pid;
    }
    for (const Event& e : d.events) CHECK(d.tracks.count(e.uuid) == 1);
  }
}

// The process descriptor's process_name is the document's (of_process).
void test_process_name() {
  Snapshot s;
  s.names = {"work"};
  SnapshotTimeline main = timeline(1, "main", TimelineKind::kJs);
  main.records.push_back(rec(1, 0, 0, 10, 20, 0));
  s.timelines.push_back(main);
  std::string out;
  write_perfetto(s, DocumentInfo{0, hotspan_test::kTestClocks, {}}.of_process(77, "server.js (worker 2) \xc3\xa9"), out);
  const Doc d = parse(out, perfetto_sequence_id(77));
  const auto proc = d.tracks.find(kPerfettoProcessUuid ^ perfetto_uuid_salt(77));
  CHECK(proc != d.tracks.end());
  const auto desc = decode(first(proc->second, 3)->bytes);
  CHECK_EQ(first(desc, 1)->v, uint64_t{77});
  CHECK(first(desc, 6)->bytes == "server.js (worker 2) \xc3\xa9");
}

}  // namespace

int main() {
  test_varint();
  test_structure();
  test_parent_not_enclosing();
  test_parent_ordered_after_child();
  test_edge_cases();
  test_clock();
  test_processes();
  test_process_name();
  return check::result("perfetto_test");
}
