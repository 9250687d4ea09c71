// The incremental writers (PerfettoWriter, ChromeJsonWriter): a document
// written in N batches is byte-identical to the whole-snapshot writer's (for
// random snapshots cut at random points, through a string and through a
// sink with small blocks); a Perfetto document whose names and timelines
// first appear in later batches holds the same spans, and every packet of it
// refers only to what earlier packets declared, so a file cut at any packet
// boundary decodes on its own; restart() begins a self-contained file; local
// ids far above 0 give the same document (but for the ids); the batches of
// several processes (set_process) are each written as their own document is.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "check.h"
#include "write/chrome_json_writer.h"
#include "write/perfetto_writer.h"
#include "snapshot_builders.h"

namespace {

using namespace hotspan;
using hotspan_test::kTestClocks;

constexpr int64_t kOrigin = 5000000000;

// ---- random snapshots: whole trees on stacks, overlapping async spans ----

struct Gen {
  std::mt19937 rng;
  explicit Gen(uint32_t seed) : rng(seed) {}
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(rng() % n); }

  // A tree under `parent` in [start, end) on `tl`, appended in end order
  // (children before their parent); local ids in begin order.
  void tree(SnapshotTimeline& tl, uint32_t& next_local, uint32_t parent, uint16_t depth, int64_t start,
            int64_t end, uint32_t names) {
    const uint32_t local = next_local++;
    int64_t t = start + 1;
    const uint32_t kids = depth < 4 ? below(4) : 0;
    for (uint32_t k = 0; k < kids && t + 10 < end; ++k) {
      const int64_t len = 1 + below(static_cast<uint32_t>(std::min<int64_t>(end - t - 1, 1000)));
      tree(tl, next_local, local, static_cast<uint16_t>(depth + 1), t, t + len, names);
      t += len + below(3);
    }
    uint16_t flags = below(7) == 0 ? kFlagError : 0;
    if (depth == 0 && tl.id == 2 && below(2) == 0) {
      flags |= kFlagParentElsewhere;
      tl.foreign_parents.emplace_back(local, make_span_id(1, 1 + below(5)));
    }
    tl.records.push_back(hotspan_test::rec(local, parent, below(names), start, end, depth, flags));
    if (below(3) == 0) tl.attrs.emplace_back(local, "{\"k\":" + std::to_string(local) + ",\"s\":\"x\\u00e9\"}");
    if (below(17) == 0) tl.attrs.emplace_back(local, "[1,2]");
  }

  Snapshot snapshot() {
    Snapshot s;
    s.names = {"request", "db.query", "q\"uote", "bad\xff utf8", "render"};
    const uint32_t names = static_cast<uint32_t>(s.names.size());
    s.timelines.push_back(hotspan_test::timeline(1, "main", TimelineKind::kJs));
    s.timelines.push_back(hotspan_test::timeline(2, "worker", TimelineKind::kNative));
    s.timelines.push_back(hotspan_test::timeline(3, "groups", TimelineKind::kGroups));
    s.timelines.push_back(hotspan_test::timeline(4, "net", TimelineKind::kTrack));
    s.timelines.push_back(hotspan_test::timeline(5, "disk", TimelineKind::kTrack));
    s.timelines.back().serial = true;
    for (size_t k = 0; k < 3; ++k) {
      SnapshotTimeline& tl = s.timelines[k];
      uint32_t next = 1;
      int64_t t = kOrigin + below(1000);
      for (uint32_t r = 0, roots = 5 + below(20); r < roots; ++r) {
        const int64_t len = 20 + below(5000);
        tree(tl, next, 0, 0, t, t + len, names);
        t += len + below(100);
      }
    }
    // Async spans: overlapping; some children of an earlier span of the track.
    SnapshotTimeline& net = s.timelines[3];
    for (uint32_t i = 1; i <= 40; ++i) {
      const int64_t start = kOrigin + 100 * i + below(50);
      const uint32_t parent = i > 3 && below(3) == 0 ? i - 1 - below(3) : 0;
      net.records.push_back(hotspan_test::rec(i, parent, below(names), start, start + 10 + below(900), 0, kFlagAsync));
      if (below(2) == 0) net.attrs.emplace_back(i, "{\"n\":" + std::to_string(i) + "}");
    }
    std::sort(net.records.begin(), net.records.end(),
              [](const SpanRecord& a, const SpanRecord& b) { return a.end_ns < b.end_ns; });
    SnapshotTimeline& disk = s.timelines[4];
    for (uint32_t i = 1; i <= 10; ++i) {
      disk.records.push_back(hotspan_test::rec(i, 0, below(names), kOrigin + 1000 * i, kOrigin + 1000 * i + 500, 0, kFlagAsync));
    }
    return s;
  }
};

// The records of `tl` in [from, to), with the side entries they own.
SnapshotTimeline slice(const SnapshotTimeline& tl, size_t from, size_t to) {
  SnapshotTimeline out = tl;
  out.records.assign(tl.records.begin() + static_cast<ptrdiff_t>(from), tl.records.begin() + static_cast<ptrdiff_t>(to));
  std::set<uint32_t> locals;
  for (const SpanRecord& r : out.records) locals.insert(r.local_id);
  auto keep = [&](auto& v) {
    v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& e) { return !locals.count(e.first); }), v.end());
  };
  keep(out.attrs);
  keep(out.foreign_parents);
  return out;
}

// The snapshot cut into batches: timelines in order, each thread / group
// timeline cut at random record boundaries, tracks whole; every timeline
// (maybe without records) and every name in the first batch.
std::vector<Snapshot> batches(const Snapshot& s, Gen& g) {
  std::vector<Snapshot> out(1);
  out[0].names = s.names;
  for (const SnapshotTimeline& tl : s.timelines) out[0].timelines.push_back(slice(tl, 0, 0));
  for (const SnapshotTimeline& tl : s.timelines) {
    std::vector<size_t> cuts = {0, tl.records.size()};
    if (tl.kind != TimelineKind::kTrack) {
      for (uint32_t k = 0, n = g.below(6); k < n; ++k) cuts.push_back(g.below(static_cast<uint32_t>(tl.records.size() + 1)));
    }
    std::sort(cuts.begin(), cuts.end());
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      if (g.below(2) == 0 || out.size() == 1) {
        out.emplace_back();
        out.back().names = s.names;
      }
      out.back().timelines.push_back(slice(tl, cuts[k], cuts[k + 1]));
    }
  }
  return out;
}

// The batches through one writer, the output taken between calls.
template <typename Writer>
std::string streamed(const std::vector<Snapshot>& parts) {
  std::string out, all;
  Writer w(DocumentInfo{kOrigin, kTestClocks, {}}, out);
  for (const Snapshot& b : parts) {
    w.append(b);
    all += out;
    out.clear();
  }
  w.finish();
  return all + out;
}

template <typename Writer>
std::string sunk(const std::vector<Snapshot>& parts, size_t block) {
  hotspan_test::Collect sink(block);
  Writer w(DocumentInfo{kOrigin, kTestClocks, {}}, sink);
  for (const Snapshot& b : parts) w.append(b);
  w.finish();
  CHECK(sink.blocks.size() >= parts.size());
  return sink.joined();
}

void test_batches_equal_whole() {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    Gen g(seed);
    const Snapshot s = g.snapshot();
    const std::vector<Snapshot> parts = batches(s, g);
    std::string pf, json;
    write_perfetto(s, kOrigin, kTestClocks, pf);
    write_chrome_json(s, kOrigin, kTestClocks, json);
    CHECK(streamed<PerfettoWriter>(parts) == pf);
    CHECK(streamed<ChromeJsonWriter>(parts) == json);
    const size_t block = 1 + g.below(300);
    CHECK(sunk<PerfettoWriter>(parts, block) == pf);
    CHECK(sunk<ChromeJsonWriter>(parts, block) == json);
    if (check::failures() > 0) {
      std::printf("seed %u: %zu batches\n", seed, parts.size());
      return;
    }
  }
}

// ---- Perfetto, packet by packet ----

bool varint(const std::string& s, size_t& i, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && i < s.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(s[i++]);
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

struct Field {
  uint32_t num;
  uint64_t v;
  std::string bytes;
};

std::vector<Field> fields(const std::string& s) {
  std::vector<Field> out;
  size_t i = 0;
  while (i < s.size()) {
    uint64_t key = 0;
    Field f{};
    if (!varint(s, i, key)) break;
    f.num = static_cast<uint32_t>(key >> 3);
    const uint32_t wire = key & 7;
    if (wire == 0) {
      varint(s, i, f.v);
    } else if (wire == 1) {
      i += 8;
    } else if (wire == 2) {
      uint64_t n = 0;
      varint(s, i, n);
      f.bytes = s.substr(i, n);
      i += n;
    } else {
      CHECK(!"unexpected wire type");
      break;
    }
    out.push_back(f);
  }
  return out;
}

// The document's packets, each split into its fields; stops at the first
// that is not a whole Trace.packet.
std::vector<std::vector<Field>> packets_of(const std::string& doc) {
  std::vector<std::vector<Field>> out;
  size_t i = 0;
  while (i < doc.size()) {
    uint64_t key = 0, len = 0;
    CHECK(varint(doc, i, key) && key == 0x0A);
    CHECK(varint(doc, i, len) && i + len <= doc.size());
    if (check::failures() > 0) break;
    out.push_back(fields(doc.substr(i, len)));
    i += len;
  }
  return out;
}

// A span as a reader sees it: (timeline, name, start, end, annotations).
using Span = std::tuple<uint32_t, std::string, uint64_t, uint64_t, std::string>;

// Walks the packets in order, checking that each is whole and refers only to
// names and tracks declared before it (what makes every packet-boundary
// prefix a trace on its own), that slices nest per track; returns the spans.
// With `cut`, slices begun and not ended (cut off) are allowed.
std::vector<Span> spans_checked(const std::string& doc, bool cut = false) {
  std::vector<Span> spans;
  std::map<uint64_t, std::string> names;
  std::set<uint64_t> tracks;
  std::map<uint64_t, std::vector<Span>> open;
  std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> on_track;  // slices per track
  bool cleared = false;
  for (const std::vector<Field>& packet : packets_of(doc)) {
    uint64_t ts = 0;
    for (const Field& f : packet) {
      if (f.num == 13 && (f.v & 1)) cleared = true;
      if (f.num == 8) ts = f.v;
      if (f.num == 12) {
        for (const Field& en : fields(f.bytes)) {
          if (en.num != 2) continue;
          const std::vector<Field> e = fields(en.bytes);
          names[e[0].v] = e[1].bytes;
        }
      }
      if (f.num == 60) tracks.insert(fields(f.bytes)[0].v);
    }
    CHECK(cleared);  // the first packet clears the incremental state
    for (const Field& f : packet) {
      if (f.num != 11) continue;
      uint64_t type = 0, uuid = 0, iid = 0;
      std::string ann;
      for (const Field& e : fields(f.bytes)) {
        if (e.num == 9) type = e.v;
        if (e.num == 11) uuid = e.v;
        if (e.num == 10) iid = e.v;
        if (e.num == 4) ann += e.bytes + "|";
      }
      CHECK(tracks.count(uuid) == 1);
      if (type == 1) {
        CHECK(names.count(iid) == 1);
        open[uuid].emplace_back(static_cast<uint32_t>(uuid & 0xFFFFFFFFu), names[iid], ts, 0, ann);
      } else {
        CHECK(!open[uuid].empty());
        if (open[uuid].empty()) continue;
        Span s = open[uuid].back();
        open[uuid].pop_back();
        CHECK(std::get<2>(s) <= ts);
        std::get<3>(s) = ts;
        spans.push_back(s);
        on_track[uuid].emplace_back(std::get<2>(s), ts);
      }
    }
  }
  if (!cut) {
    for (const auto& o : open) CHECK(o.second.empty());
  }
  // In time (as a trace processor sorts them), the slices of a track nest:
  // none starts inside another and ends after it.
  for (auto& t : on_track) {
    std::sort(t.second.begin(), t.second.end(),
              [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<uint64_t> ends;
    for (const auto& [start, end] : t.second) {
      while (!ends.empty() && ends.back() <= start) ends.pop_back();
      CHECK(ends.empty() || end <= ends.back());
      ends.push_back(end);
    }
  }
  std::sort(spans.begin(), spans.end());
  return spans;
}

// Names and timelines first seen in later batches; tracks cut too.
std::vector<Snapshot> late_batches(const Snapshot& s, Gen& g) {
  std::vector<Snapshot> out;
  for (const SnapshotTimeline& tl : s.timelines) {
    std::vector<size_t> cuts = {0, tl.records.size()};
    for (uint32_t k = 0, n = g.below(5); k < n; ++k) cuts.push_back(g.below(static_cast<uint32_t>(tl.records.size() + 1)));
    std::sort(cuts.begin(), cuts.end());
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      Snapshot b;
      b.timelines.push_back(slice(tl, cuts[k], cuts[k + 1]));
      uint32_t used = 0;
      for (const SpanRecord& r : b.timelines[0].records) used = std::max(used, r.name + 1);
      const size_t known = out.empty() ? 0 : out.back().names.size();
      b.names.assign(s.names.begin(), s.names.begin() + static_cast<ptrdiff_t>(std::max<size_t>(used, known)));
      out.push_back(std::move(b));
    }
  }
  return out;
}

void test_late_names_and_timelines() {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    Gen g(seed);
    const Snapshot s = g.snapshot();
    std::string whole;
    write_perfetto(s, kOrigin, kTestClocks, whole);
    const std::vector<Snapshot> parts = late_batches(s, g);
    const std::string doc = streamed<PerfettoWriter>(parts);
    CHECK(doc != whole);  // names and descriptors come later
    CHECK(spans_checked(doc) == spans_checked(whole));
    if (check::failures() > 0) {
      std::printf("seed %u\n", seed);
      return;
    }
  }
}

// A file cut at any packet boundary: the packets up to the cut decode on
// their own (the clock first, every name and track declared before use,
// slices nested), and the spans they hold are spans of the whole file.
void test_cut_at_every_packet() {
  Gen g(7);
  const Snapshot s = g.snapshot();
  const std::string doc = streamed<PerfettoWriter>(late_batches(s, g));
  const std::vector<Span> all = spans_checked(doc);
  size_t i = 0, packets = 0;
  while (i < doc.size() && check::failures() == 0) {
    uint64_t key = 0, len = 0;
    CHECK(varint(doc, i, key) && varint(doc, i, len));
    i += len;
    ++packets;
    const std::vector<Span> part = spans_checked(doc.substr(0, i), true);
    CHECK(std::includes(all.begin(), all.end(), part.begin(), part.end()));
  }
  CHECK(packets > 100);
}

// restart(): the next file has its own header, names and descriptors, and
// equals a fresh writer's.
void test_restart() {
  Gen g(3);
  const Snapshot s = g.snapshot();
  std::string first, fresh;
  write_perfetto(s, kOrigin, kTestClocks, fresh);
  {
    PerfettoWriter w(DocumentInfo{kOrigin, kTestClocks, {}}, first);
    w.append(s, true);
    w.finish();
    CHECK(first == fresh);
    first.clear();
    w.restart();
    w.append(s, true);
    w.finish();
    CHECK(first == fresh);
  }
  std::string json_fresh, json;
  write_chrome_json(s, kOrigin, kTestClocks, json_fresh);
  ChromeJsonWriter w(DocumentInfo{kOrigin, kTestClocks, {}}, json);
  w.append(s, true);
  w.finish();
  json.clear();
  w.restart();
  w.append(s, true);
  w.finish();
  CHECK(json == json_fresh);
}

// ---- local ids far above 0 (a stream's batch late in a recording, a
// timeline whose oldest records were recycled) ----

// `s` with every local id (and the parent, attribute and foreign-parent
// keys that name one) raised by `base`: the same trees, so the same
// document but for the span_id / parent_id values.
Snapshot shifted(const Snapshot& s, uint32_t base) {
  Snapshot out = s;
  for (SnapshotTimeline& tl : out.timelines) {
    for (SpanRecord& r : tl.records) {
      r.local_id += base;
      if (r.parent_local != 0) r.parent_local += base;
    }
    for (auto& a : tl.attrs) a.first += base;
    for (auto& f : tl.foreign_parents) f.first += base;
  }
  return out;
}

// Every event in document order: track, type, name, timestamp and its
// annotations, a span_id shown as "S" and a parent_id as "P" (their values
// depend on the local ids). Per thread or group track, the span ids of the
// begins go up (begin order is local id order).
std::vector<std::string> events(const std::string& doc) {
  std::vector<std::string> out;
  std::map<uint64_t, uint64_t> last_id;
  for (const std::vector<Field>& packet : packets_of(doc)) {
    uint64_t ts = 0;
    for (const Field& f : packet)
      if (f.num == 8) ts = f.v;
    for (const Field& f : packet) {
      if (f.num != 11) continue;
      std::string e = std::to_string(ts);
      uint64_t uuid = 0;
      for (const Field& ev : fields(f.bytes)) {
        if (ev.num == 11) uuid = ev.v;
        if (ev.num != 4) {
          e += " " + std::to_string(ev.num) + "=" + std::to_string(ev.v);
          continue;
        }
        const std::vector<Field> ann = fields(ev.bytes);
        if (!ann.empty() && ann[0].num == 1 && (ann[0].v == 1 || ann[0].v == 2)) {
          e += ann[0].v == 1 ? " S" : " P";
          // Gen's timelines 4 and 5 (and their lanes) are async tracks.
          if (ann[0].v == 1 && uuid != 4 && uuid != 5 && (uuid >> 32) == 0) {
            CHECK(ann.size() == 2 && ann[1].v > last_id[uuid]);
            last_id[uuid] = ann[1].v;
          }
        } else {
          e += " " + ev.bytes;
        }
      }
      out.push_back(e);
    }
  }
  return out;
}

void test_high_local_ids() {
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    Gen g(seed);
    const Snapshot s = g.snapshot();
    const Snapshot hi = shifted(s, 3000000 + 977 * seed);
    std::string low_doc, hi_doc;
    write_perfetto(s, kOrigin, kTestClocks, low_doc);
    write_perfetto(hi, kOrigin, kTestClocks, hi_doc);
    CHECK(low_doc != hi_doc);
    const std::vector<std::string> want = events(low_doc);
    CHECK(want.size() > 100);
    CHECK(events(hi_doc) == want);
    const std::vector<Snapshot> parts = batches(hi, g);
    CHECK(streamed<PerfettoWriter>(parts) == hi_doc);
    CHECK(sunk<PerfettoWriter>(parts, 1 + g.below(300)) == hi_doc);
    if (check::failures() > 0) {
      std::printf("seed %u\n", seed);
      return;
    }
  }
}

// Document metadata members go into Chrome JSON's "metadata"; an empty
// document is still whole.
void test_metadata_and_empty() {
  std::string json;
  ChromeJsonWriter w(DocumentInfo{kOrigin, kTestClocks, DocumentCounts{{{"dropped", 3}}}}, json);
  w.finish();
  CHECK(json.find("{\"traceEvents\":[\n{\"name\":\"process_name\"") == 0);
  CHECK(json.find("\"origin_unix_ns\":\"") != std::string::npos);
  const std::string end = "\"},\"hotspan\":{\"dropped\":3}}}\n";
  CHECK(json.size() > end.size() && json.compare(json.size() - end.size(), end.size(), end) == 0);
  std::string pf, whole;
  PerfettoWriter p(DocumentInfo{kOrigin, kTestClocks, {}}, pf);
  p.finish();
  write_perfetto(Snapshot{}, kOrigin, kTestClocks, whole);
  CHECK(pf == whole);
}

// set_process: one document of two processes (the same timeline id in each,
// both sampled), each kept apart as joined documents are. Perfetto: the
// concatenation of each process's own document; Chrome JSON: each
// process's events (its pid, its process_name, its thread metadata and
// profile events begun afresh) after the other's, in one document.
void test_processes() {
  Snapshot a;
  a.names = {"request"};
  a.timelines.push_back(hotspan_test::timeline(1, "main", TimelineKind::kJs));
  a.timelines[0].records.push_back(hotspan_test::rec(1, 0, 0, kOrigin + 10, kOrigin + 20));
  auto prof = std::make_shared<CpuProfile>();
  prof->timeline = 1;
  prof->frames = {{"(root)", "", -1, -1}, {"work", "file:///a.js", 3, 4}};
  prof->node_frame = {0, 1};
  prof->node_parent = {-1, 0};
  prof->sample_node = {1, 1};
  prof->sample_ns = {kOrigin + 12, kOrigin + 15};
  a.cpu_profiles.push_back(prof);
  Snapshot b = a;
  b.timelines[0].name = "other main";
  const DocumentInfo doc{kOrigin, kTestClocks, {}};
  const DocumentInfo da = doc.of_process(10, "a.js"), db = doc.of_process(20, "b.js");
  {
    std::string multi, wa, wb;
    PerfettoWriter w(doc, multi);
    w.set_process(10, "a.js");
    w.append(a);
    w.set_process(20, "b.js");
    w.append(b);
    w.finish();
    write_perfetto(a, da, wa);
    write_perfetto(b, db, wb);
    CHECK(multi == wa + wb);
  }
  {
    std::string multi, wa, wb;
    ChromeJsonWriter w(doc, multi);
    w.set_process(10, "a.js");
    w.append(a);
    w.set_process(20, "b.js");
    w.append(b);
    w.finish();
    write_chrome_json(a, da, wa);
    write_chrome_json(b, db, wb);
    const std::string head = "{\"traceEvents\":[\n", tail = "\n],\"displayTimeUnit\"";
    const size_t ea = wa.find(tail), eb = wb.find(tail);
    CHECK(ea != std::string::npos && eb != std::string::npos);
    CHECK(multi == wa.substr(0, ea) + ",\n" + wb.substr(head.size(), eb - head.size()) + wa.substr(ea));
    CHECK(wb.find("\"pid\":20,") != std::string::npos && wb.find("\"pid\":10,") == std::string::npos);
  }
}

}  // namespace

int main() {
  RUN_TEST(test_batches_equal_whole);
  RUN_TEST(test_late_names_and_timelines);
  RUN_TEST(test_cut_at_every_packet);
  RUN_TEST(test_high_local_ids);
  RUN_TEST(test_restart);
  RUN_TEST(test_metadata_and_empty);
  RUN_TEST(test_processes);
  return check::result("incremental_writers_test");
}
