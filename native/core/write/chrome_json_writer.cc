// Chrome Trace Event JSON writer. Hot loop: one event per record, formatted
// by hand (no iostreams, no to_string) into a pre-reserved std::string; names
// and timeline names are escaped once per document, attribute objects (JSON
// text produced by the facade) are checked (one strict scan) and spliced in.
//
// Conventions a consumer can rely on (json_test.cc checks them):
// - ts and dur in us on a grid of 1/1024 us (see put_grid): ts =
//   round((start_ns - origin_ns) * 1024 / 1000) / 1024, dur = the end's ts
//   - ts, each an exact double, so ts + dur in doubles is the end's ts; ns =
//   round(us * 1000). Negative ts (before the origin) are written.
// - args: the attribute members first, then span_id and parent_id (0: no
//   parent), then "error":true / "abandoned":true only when flagged. Attribute
//   text that is not exactly one JSON object is kept as the string member
//   "attrs"; invalid UTF-8 in it is repaired as in names.
// - Strings: '"', '\' and controls (as \u00XX) escaped, valid UTF-8 as is,
//   invalid bytes as U+FFFD per maximal invalid subpart (what TextDecoder does).
// - Threads, groups and serial tracks: "X"; concurrent tracks: a "b"/"e" pair
//   per span with id = the span id as a string. Events of one timeline are in
//   the snapshot's (end) order; viewers sort by ts.
// - pid: the document's (DocumentInfo::pid: the recording process's, 1 from
//   WebAssembly), on every event, so several processes' events join; the
//   first event names the process (process_name metadata:
//   DocumentInfo::process_name). After set_process(), the batches are
//   another process's: its pid on their events, its process_name on its
//   first batch, its timelines' metadata and profiles its own.
// - Counters: a "C" event per sample (tid 0, args {"value": v}, v the
//   shortest text that reads back as the same double), after the batch's
//   spans; samples a full series dropped are counted in
//   metadata.hotspan_counters_dropped {name: count}.
// - CPU samples: per sampled timeline one "Profile" event and "ProfileChunk"
//   events (ph "P", id "0x<timeline id hex>", the document's pid, tid = the timeline), the
//   form DevTools reads: each chunk's cpuProfile.nodes (only nodes new to the
//   timeline: the trees of every profile of a timeline are merged under one
//   root, id 1) and samples (node ids), and timeDeltas in us on the same
//   1/1024 us grid as ts, each from the previous sample (the first from the
//   Profile event's ts). lineNumber and columnNumber are 0-based, as V8's.
//   Samples the store refused: metadata.hotspan_cpu_samples_dropped.
#include "write/chrome_json_writer.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "record/json_text.h"
#include "record/local_index.h"
#include "record/utf8_seq.h"

namespace hotspan {
namespace {

using json_text::append_escaped;

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Writes v in decimal at p; returns the end.
inline char* put_u64(char* p, uint64_t v) {
  char tmp[20];
  char* t = tmp + sizeof tmp;
  while (v >= 100) {
    unsigned r = static_cast<unsigned>(v % 100);
    v /= 100;
    t -= 2;
    t[0] = kDigitPairs[2 * r];
    t[1] = kDigitPairs[2 * r + 1];
  }
  if (v >= 10) {
    t -= 2;
    t[0] = kDigitPairs[2 * v];
    t[1] = kDigitPairs[2 * v + 1];
  } else {
    *--t = static_cast<char>('0' + v);
  }
  size_t n = static_cast<size_t>(tmp + sizeof tmp - t);
  std::memcpy(p, t, n);
  return p + n;
}

inline char* put_i64(char* p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return put_u64(p, 0 - static_cast<uint64_t>(v));
  }
  return put_u64(p, static_cast<uint64_t>(v));
}

// ---- Times on a dyadic grid ----
//
// Readers parse ts and dur as doubles and take ts + dur as the end; some
// (speedscope) first subtract the thread's earliest ts from every ts. With
// decimal texts (3 decimals) those sums round and can land one ulp past the
// end, where the next span starts: an overlap, or a child outliving its
// parent. So every time is written on a grid of 1/1024 us: units =
// round(ns * 1024 / 1000), written as units / 1024 exactly (integer part,
// then the fraction's exact decimals from a table, at most 10 digits).
// Every such text is a double exactly (while |units| < 2^53), so ts + dur
// and any difference a reader takes are exact. One unit is 0.9765625 ns:
// distinct ns stay distinct and round(us * 1000) gives the ns back (in
// doubles, exactly within 2^47 ns of the origin).

// A time on the grid, sign and magnitude: the magnitude of any int64 ns
// fits in 64 bits of units (2^63 * 1.024 < 2^64).
struct GridTime {
  uint64_t units;
  bool negative;
};

// round(ns * 128 / 125) on the magnitude. Never a tie (256 ns is even, 125
// odd), so rounding the magnitude is rounding the value: units(-ns) ==
// -units(ns), and the grid is monotonic across zero.
inline GridTime grid(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t m = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return {(m / 125) * 128 + ((m % 125) * 256 + 125) / 250, negative};
}

// end - start on the grid (saturated past 2^64 units, a span of ~570 years).
inline GridTime grid_diff(GridTime end, GridTime start) {
  if (end.negative == start.negative) {
    // Same sign: |end| - |start| carries end's sign, flipped if it is negative.
    const bool flip = end.units < start.units;
    const uint64_t d = flip ? start.units - end.units : end.units - start.units;
    return {d, d != 0 && (end.negative != flip)};
  }
  const uint64_t sum = end.units + start.units;
  return {sum < end.units ? ~uint64_t{0} : sum, end.negative};
}

// ".ddd" of k / 1024 for k in [0, 1024), trailing zeros dropped ("" for 0),
// padded to 16 bytes so one fixed-size copy writes it.
struct FractionTable {
  char text[1024][16];
  uint8_t len[1024];
  constexpr FractionTable() : text(), len() {
    for (int k = 0; k < 1024; ++k) {
      uint64_t v = static_cast<uint64_t>(k) * 9765625;  // k / 1024 = k * 5^10 / 10^10
      int n = 10;
      while (n > 0 && v % 10 == 0) {
        v /= 10;
        --n;
      }
      for (int i = n; i >= 1; --i) {
        text[k][i] = static_cast<char>('0' + v % 10);
        v /= 10;
      }
      text[k][0] = '.';
      len[k] = static_cast<uint8_t>(n == 0 ? 0 : n + 1);
    }
  }
};
constexpr FractionTable kFractions{};

// units / 1024 us, exactly.
inline char* put_grid(char* p, GridTime t) {
  if (t.negative) *p++ = '-';
  const uint64_t u = t.units;
  p = put_u64(p, u >> 10);
  const unsigned f = static_cast<unsigned>(u & 1023);
  std::memcpy(p, kFractions.text[f], 16);
  return p + kFractions.len[f];
}

template <size_t N>
inline char* put_lit(char* p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + N - 1;
}

// Appends the body of a JSON string (no quotes). Quote, backslash and control
// characters are escaped (controls as \u00XX); valid UTF-8 passes through;
// bytes that are not valid UTF-8 become U+FFFD so the document stays valid.
std::string escaped(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  append_escaped(out, s.data(), s.size());
  return out;
}

inline bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The members of an attribute object, for splicing into "args": "{...}" ->
// "...", trimmed. Empty for "", "{}" and "{ }". The text is checked, not
// trusted: invalid UTF-8 is repaired (into `scratch`), and text that is not
// exactly one JSON object is written as a string.
struct AttrText {
  const char* p = nullptr;
  size_t n = 0;
  bool object = true;  // false: not an object; written as an escaped string
};

AttrText attr_members(const std::string& raw, std::string& scratch) {
  const std::string* text = &raw;
  if (!json_text::valid_utf8(raw)) {
    scratch = json_text::sanitized(raw);
    text = &scratch;
  }
  const std::string& s = *text;
  size_t b = 0, e = s.size();
  while (b < e && is_ws(s[b])) ++b;
  while (e > b && is_ws(s[e - 1])) --e;
  AttrText t;
  if (b == e) return t;
  if (!json_text::is_object(s.data() + b, s.data() + e)) {
    t.object = false;
    t.p = s.data() + b;
    t.n = e - b;
    return t;
  }
  ++b;
  --e;
  while (b < e && is_ws(s[b])) ++b;
  while (e > b && is_ws(s[e - 1])) --e;
  t.p = s.data() + b;
  t.n = e - b;
  return t;
}


}  // namespace

// The state behind ChromeJsonWriter: what is already written (the opening,
// which timelines' metadata events, the escaped names) and the buffer.
class ChromeJsonWriter::Impl {
 public:
  // Without `out`, the output goes to `sink` through a scratch block.
  Impl(const DocumentInfo& doc, std::string* out, BlockSink* sink)
      : doc_(doc), out_(out != nullptr ? *out : block_), sink_(sink) {}

  template <typename SnapshotT>
  void append(const SnapshotT& snapshot, bool last) {
    // Size estimate: ~200 bytes per complete event plus attribute text.
    size_t estimate = 128;
    for (const auto& tl : snapshot.timelines) {
      estimate += 200 + 2 * tl.name.size() + 220 * tl.records.size();
      if (tl.kind == TimelineKind::kTrack) estimate += 120 * tl.records.size();
      for (const auto& a : tl.attrs) estimate += a.second.size();
    }
    for (const CounterSeries& c : snapshot.counters) estimate += (100 + c.name.size()) * c.samples.size();
    for (const auto& prof : snapshot.cpu_profiles) estimate += 200 * prof->node_frame.size() + 32 * prof->sample_ns.size();
    // Streaming: one block plus the largest event that may overshoot it.
    reserve_ = sink_ != nullptr ? std::min(estimate, sink_->block_bytes() + (64 << 10)) : out_.size() + estimate;
    out_.reserve(reserve_);

    for (size_t i = names_.size(); i < snapshot.names.size(); ++i) names_.push_back(escaped(snapshot.names[i]));
    if (!started_) opening();
    if (named_.insert(doc_.pid).second) process_metadata();
    for (const auto& tl : snapshot.timelines) {
      if (described_.insert(process_key(tl.id)).second) timeline_metadata(tl.id, tl.name);
    }
    for (const auto& tl : snapshot.timelines) events(tl);
    counter_events(snapshot.counters);
    for (const auto& prof : snapshot.cpu_profiles) profile_events(*prof);
    cpu_dropped_ = std::max(cpu_dropped_, snapshot.cpu_samples_dropped);
    // A streamed batch reaches the sink whole; the last one goes with the end.
    if (sink_ != nullptr && !last) hand_over();
  }

  void finish() {
    if (!started_) opening();
    // Which clock ts is on: performance.now() (us), whose zero is
    // origin_monotonic_ns on CLOCK_MONOTONIC and origin_unix_ns on the Unix
    // epoch (REALTIME then, less the MONOTONIC time since the origin). Strings:
    // ns past 2^53 are not exact as JSON numbers.
    char buf[1280];
    char* p = put_lit(buf, "\n],\"displayTimeUnit\":\"ms\",\"metadata\":{\"hotspan_clock\":{"
                           "\"ts_axis\":\"performance.now() in us\",\"ts_grid\":\"1/1024 us: "
                           "ts and dur are round(ns*1024/1000)/1024, exact doubles; ns = round(us*1000)\","
                           "\"origin_monotonic_ns\":\"");
    p = put_i64(p, doc_.origin_ns);
    p = put_lit(p, "\",\"origin_unix_ns\":\"");
    p = put_i64(p, doc_.clocks.realtime_ns - (doc_.clocks.monotonic_ns - doc_.origin_ns));
    p = put_lit(p, "\"}");
    out_.append(buf, static_cast<size_t>(p - buf));
    // The recording's counts (document_info.h).
    if (!doc_.counts.empty()) counts_member("hotspan", doc_.counts.values);
    // Samples full counter series refused (counter_store.h), by series name.
    if (!counters_dropped_.empty()) counts_member("hotspan_counters_dropped", counters_dropped_);
    if (cpu_dropped_ != 0) {
      char* q = put_lit(buf, ",\"hotspan_cpu_samples_dropped\":");
      q = put_u64(q, cpu_dropped_);
      out_.append(buf, static_cast<size_t>(q - buf));
    }
    out_.append("}}\n", 3);
    if (sink_ != nullptr) hand_over();
  }

  void set_counts(DocumentCounts counts) { doc_.counts = std::move(counts); }

  void set_process(uint32_t pid, std::string name) {
    doc_.pid = pid;
    doc_.process_name = std::move(name);
  }

  // ,"key":{"name":n,...} into the metadata.
  template <typename Pairs>
  void counts_member(const char* key, const Pairs& pairs) {
    char buf[32];
    out_.append(",\"");
    out_.append(key);
    out_.append("\":{");
    bool first = true;
    for (const auto& [name, n] : pairs) {
      if (!first) out_.push_back(',');
      first = false;
      out_.push_back('"');
      append_escaped(out_, name.data(), name.size());
      char* p = put_lit(buf, "\":");
      p = put_u64(p, n);
      out_.append(buf, static_cast<size_t>(p - buf));
    }
    out_.push_back('}');
  }

  void restart() {
    started_ = false;
    first_ = true;
    described_.clear();
    named_.clear();
    counters_dropped_.clear();
    profiles_.clear();
    cpu_dropped_ = 0;
  }

 private:
  void hand_over() {
    sink_->take_block(out_, out_.size());
    // The buffer handed back (maybe another one) keeps its capacity: the
    // next block reuses its pages.
    out_.clear();
    out_.reserve(reserve_);
  }
  void boundary() {
    if (sink_ != nullptr && out_.size() >= sink_->block_bytes()) hand_over();
  }
  void sep() {
    if (!first_) out_.append(",\n", 2);
    first_ = false;
  }

  // "pid":<the document's pid>,"tid":<tid>: every event's process and thread.
  char* put_pid_tid(char* p, uint64_t tid) const {
    p = put_lit(p, "\"pid\":");
    p = put_u64(p, doc_.pid);
    p = put_lit(p, ",\"tid\":");
    return put_u64(p, tid);
  }

  // A timeline of the current process (timeline ids are per process).
  uint64_t process_key(uint32_t timeline) const { return uint64_t{doc_.pid} << 32 | timeline; }

  void opening() {
    started_ = true;
    out_.append("{\"traceEvents\":[\n");
    named_.insert(doc_.pid);
    process_metadata();
  }

  // The current process's name, on its first sight.
  void process_metadata() {
    sep();
    char buf[96];
    char* p = put_lit(buf, "{\"name\":\"process_name\",\"ph\":\"M\",");
    p = put_pid_tid(p, 0);
    p = put_lit(p, ",\"args\":{\"name\":\"");
    out_.append(buf, static_cast<size_t>(p - buf));
    append_escaped(out_, doc_.process_name.data(), doc_.process_name.size());
    out_.append("\"}}", 3);
  }

  void timeline_metadata(uint32_t id, const std::string& name) {
    char buf[160];
    sep();
    char* p = put_lit(buf, "{\"name\":\"thread_name\",\"ph\":\"M\",");
    p = put_pid_tid(p, id);
    p = put_lit(p, ",\"args\":{\"name\":\"");
    out_.append(buf, static_cast<size_t>(p - buf));
    append_escaped(out_, name.data(), name.size());
    out_.append("\"}}", 3);
    sep();
    p = put_lit(buf, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",");
    p = put_pid_tid(p, id);
    p = put_lit(p, ",\"args\":{\"sort_index\":");
    p = put_u64(p, id);
    p = put_lit(p, "}}");
    out_.append(buf, static_cast<size_t>(p - buf));
  }

  template <typename TimelineT>
  void events(const TimelineT& tl) {
    std::string& out = out_;
    const int64_t origin_ns = doc_.origin_ns;
    const bool track = tl.kind == TimelineKind::kTrack;
    const bool complete = !track || tl.serial;  // serial tracks never overlap: X
    const char* cat = tl.kind == TimelineKind::kGroups ? "group" : track ? "async" : "span";
    const size_t cat_len = std::strlen(cat);

    // ",\"pid\":<pid>,\"tid\":<id>" is the same for every event of the timeline.
    char tid_part[48];
    char* tp = put_pid_tid(put_lit(tid_part, ","), tl.id);
    const size_t tid_len = static_cast<size_t>(tp - tid_part);

    LocalIndex<std::string> attrs(tl.attrs, tl.records.size());
    LocalIndex<uint64_t> foreign(tl.foreign_parents, tl.records.size());

    // Room for an event's fixed text (< 400 bytes) and its name twice.
    constexpr size_t kInlineName = 256;
    char buf[1280];
    char* p;
    for (const SpanRecord& r : tl.records) {
      const std::string& name = r.name < names_.size() ? names_[r.name] : unknown_name_;
      const uint64_t span_id = make_span_id(tl.id, r.local_id);
      uint64_t parent_id = 0;
      if (r.flags & kFlagParentElsewhere) {
        const uint64_t* f = foreign.find(r.local_id);
        if (f) parent_id = *f;
      } else if (r.parent_local != 0) {
        parent_id = make_span_id(tl.id, r.parent_local);
      }
      // One event (two for a b/e pair) is formatted into `buf` and appended
      // at once; only attribute text and long names go to `out` directly.
      auto put_name = [&](char* q) {
        if (name.size() <= kInlineName) {
          std::memcpy(q, name.data(), name.size());
          return q + name.size();
        }
        out.append(buf, static_cast<size_t>(q - buf));
        out.append(name);
        return buf;
      };
      // ,\n{"name":"<name>","cat":"<cat>","ph":"X","ts":..,"dur":..,"pid":1,"tid":..,
      p = put_lit(buf, ",\n{\"name\":\"");
      p = put_name(p);
      p = put_lit(p, "\",\"cat\":\"");
      std::memcpy(p, cat, cat_len);
      p += cat_len;
      if (complete) {
        const GridTime start = grid(r.start_ns - origin_ns);
        p = put_lit(p, "\",\"ph\":\"X\",\"ts\":");
        p = put_grid(p, start);
        p = put_lit(p, ",\"dur\":");
        p = put_grid(p, grid_diff(grid(r.end_ns - origin_ns), start));
      } else {
        p = put_lit(p, "\",\"ph\":\"b\",\"ts\":");
        p = put_grid(p, grid(r.start_ns - origin_ns));
      }
      std::memcpy(p, tid_part, tid_len);
      p += tid_len;
      if (!complete) {
        p = put_lit(p, ",\"id\":\"");
        p = put_u64(p, span_id);
        *p++ = '"';
      }
      p = put_lit(p, ",\"args\":{");

      // "args": the attribute object's members, then ours.
      if (const std::string* a = attrs.find(r.local_id)) {
        AttrText t = attr_members(*a, attr_scratch_);
        if (t.n != 0) {
          out.append(buf, static_cast<size_t>(p - buf));
          p = buf;
          if (t.object) {
            out.append(t.p, t.n);
            out.push_back(',');
          } else {
            out.append("\"attrs\":\"", 9);
            append_escaped(out, t.p, t.n);
            out.append("\",", 2);
          }
        }
      }
      p = put_lit(p, "\"span_id\":");
      p = put_u64(p, span_id);
      p = put_lit(p, ",\"parent_id\":");
      p = put_u64(p, parent_id);
      if (r.flags & kFlagError) p = put_lit(p, ",\"error\":true");
      if (r.flags & kFlagAbandoned) p = put_lit(p, ",\"abandoned\":true");
      p = put_lit(p, "}}");

      if (!complete) {
        // The matching end event: same name, category, id and thread.
        p = put_lit(p, ",\n{\"name\":\"");
        p = put_name(p);
        p = put_lit(p, "\",\"cat\":\"async\",\"ph\":\"e\",\"ts\":");
        p = put_grid(p, grid(r.end_ns - origin_ns));
        std::memcpy(p, tid_part, tid_len);
        p += tid_len;
        p = put_lit(p, ",\"id\":\"");
        p = put_u64(p, span_id);
        p = put_lit(p, "\"}");
      }
      out.append(buf, static_cast<size_t>(p - buf));
      boundary();
    }
  }

  // A batch's counter samples as "C" events, each preceded by ",\n".
  void counter_events(const std::vector<CounterSeries>& counters) {
    char buf[128];
    for (const CounterSeries& c : counters) {
      if (c.dropped != 0) counters_dropped_[c.name] += c.dropped;
      if (c.samples.empty()) continue;
      const std::string name = escaped(c.name);
      for (const CounterSample& sample : c.samples) {
        sep();
        out_.append("{\"name\":\"", 9);
        out_.append(name);
        char* p = put_lit(buf, "\",\"ph\":\"C\",\"ts\":");
        p = put_grid(p, grid(sample.ns - doc_.origin_ns));
        p = put_pid_tid(put_lit(p, ","), 0);
        p = put_lit(p, ",\"args\":{\"value\":");
        // Finite (CounterStore refuses the rest): shortest round-trip text, valid JSON.
        p = std::to_chars(p, buf + sizeof buf, sample.value).ptr;
        p = put_lit(p, "}}");
        out_.append(buf, static_cast<size_t>(p - buf));
        boundary();
      }
    }
  }

  // What a sampled timeline's profile already has: the merged tree's nodes
  // (by parent id and frame) and the last sample's time.
  struct ProfileState {
    std::map<std::pair<uint32_t, std::string>, uint32_t> nodes;
    uint32_t next_id = 2;  // 1 is the root
    GridTime last{0, false};
  };

  // "id":"0x<timeline hex>","pid":<pid>,"tid":<timeline>,"ts":<ts>
  void profile_head(const char* name, uint32_t tl, GridTime ts) {
    char buf[192];
    sep();
    char* p = put_lit(buf, "{\"name\":\"");
    const size_t n = std::strlen(name);
    std::memcpy(p, name, n);
    p += n;
    p = put_lit(p, "\",\"ph\":\"P\",\"cat\":\"disabled-by-default-v8.cpu_profiler\",\"id\":\"0x");
    p = std::to_chars(p, buf + sizeof buf, tl, 16).ptr;
    p = put_pid_tid(put_lit(p, "\","), tl);
    p = put_lit(p, ",\"ts\":");
    p = put_grid(p, ts);
    out_.append(buf, static_cast<size_t>(p - buf));
  }

  void node_json(bool first, uint32_t id, uint32_t parent, const CpuFrame& f) {
    char buf[96];
    char* p = buf;
    if (!first) *p++ = ',';
    p = put_lit(p, "{\"id\":");
    p = put_u64(p, id);
    if (parent != 0) {
      p = put_lit(p, ",\"parent\":");
      p = put_u64(p, parent);
    }
    p = put_lit(p, ",\"callFrame\":{\"functionName\":\"");
    out_.append(buf, static_cast<size_t>(p - buf));
    append_escaped(out_, f.function.data(), f.function.size());
    out_.append("\",\"scriptId\":0,\"url\":\"");
    append_escaped(out_, f.url.data(), f.url.size());
    p = put_lit(buf, "\",\"lineNumber\":");
    p = put_i64(p, f.line);
    p = put_lit(p, ",\"columnNumber\":");
    p = put_i64(p, f.column);
    p = put_lit(p, "}}");
    out_.append(buf, static_cast<size_t>(p - buf));
  }

  // One profile's samples as ProfileChunk events (a Profile event first on
  // the timeline's first sight), each chunk at most kChunk samples.
  void profile_events(const CpuProfile& prof) {
    constexpr size_t kChunk = 4096;
    if (prof.sample_ns.empty()) return;
    const uint32_t tl = prof.timeline;
    auto [it, fresh] = profiles_.try_emplace(process_key(tl));
    ProfileState& st = it->second;
    if (fresh) {
      st.last = grid(prof.sample_ns[0] - doc_.origin_ns);
      profile_head("Profile", tl, st.last);
      out_.append(",\"args\":{\"data\":{\"startTime\":");
      char buf[48];
      char* p = put_grid(buf, st.last);
      out_.append(buf, static_cast<size_t>(p - buf));
      out_.append("}}}");
    }
    // The merged tree's id of every node, and the nodes new to it.
    std::vector<uint32_t> out_id(prof.node_frame.size());
    std::vector<std::pair<uint32_t, uint32_t>> fresh_nodes;  // node index, parent id (0: root)
    if (fresh) fresh_nodes.emplace_back(UINT32_MAX, 0);
    for (size_t i = 0; i < prof.node_frame.size(); ++i) {
      const int32_t parent = prof.node_parent[i];
      if (parent < 0) {
        out_id[i] = 1;
        continue;
      }
      const uint32_t parent_id = out_id[static_cast<size_t>(parent)];
      auto [n, added] = st.nodes.try_emplace({parent_id, cpu_frame_key(prof.frames[prof.node_frame[i]])}, st.next_id);
      if (added) {
        ++st.next_id;
        fresh_nodes.emplace_back(static_cast<uint32_t>(i), parent_id);
      }
      out_id[i] = n->second;
    }
    static const CpuFrame kRoot{"(root)", "", -1, -1};
    char buf[64];
    for (size_t begin = 0; begin < prof.sample_ns.size(); begin += kChunk) {
      const size_t end = std::min(prof.sample_ns.size(), begin + kChunk);
      profile_head("ProfileChunk", tl, grid(prof.sample_ns[begin] - doc_.origin_ns));
      out_.append(",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[");
      if (begin == 0) {
        bool first = true;
        for (const auto& [index, parent_id] : fresh_nodes) {
          if (index == UINT32_MAX) {
            node_json(first, 1, 0, kRoot);
          } else {
            node_json(first, out_id[index], parent_id, prof.frames[prof.node_frame[index]]);
          }
          first = false;
        }
      }
      out_.append("],\"samples\":[");
      for (size_t k = begin; k < end; ++k) {
        char* p = buf;
        if (k != begin) *p++ = ',';
        p = put_u64(p, out_id[prof.sample_node[k]]);
        out_.append(buf, static_cast<size_t>(p - buf));
      }
      out_.append("]},\"timeDeltas\":[");
      for (size_t k = begin; k < end; ++k) {
        const GridTime t = grid(prof.sample_ns[k] - doc_.origin_ns);
        char* p = buf;
        if (k != begin) *p++ = ',';
        p = put_grid(p, grid_diff(t, st.last));
        st.last = t;
        out_.append(buf, static_cast<size_t>(p - buf));
      }
      out_.append("]}}}");
      boundary();
    }
  }

  DocumentInfo doc_;
  std::string block_;  // the scratch block, with a sink
  std::string& out_;
  BlockSink* const sink_;
  size_t reserve_ = 0;
  bool started_ = false;
  bool first_ = true;  // no event written yet: no separator before the next
  std::set<uint64_t> described_;  // timelines whose metadata events are written (process_key)
  std::set<uint32_t> named_;      // processes whose process_name is written
  std::vector<std::string> names_;  // escaped, by name id
  std::string attr_scratch_;        // a repaired attribute text, reused
  std::map<std::string, uint64_t> counters_dropped_;  // per series, summed over batches
  std::map<uint64_t, ProfileState> profiles_;          // per sampled timeline (process_key)
  uint64_t cpu_dropped_ = 0;                           // the store's count (cumulative)
  const std::string unknown_name_ = "?";
};

ChromeJsonWriter::ChromeJsonWriter(const DocumentInfo& doc, std::string& out)
    : impl_(std::make_unique<Impl>(doc, &out, nullptr)) {}
ChromeJsonWriter::ChromeJsonWriter(const DocumentInfo& doc, BlockSink& sink)
    : impl_(std::make_unique<Impl>(doc, nullptr, &sink)) {}
ChromeJsonWriter::~ChromeJsonWriter() = default;
void ChromeJsonWriter::append(const Snapshot& batch, bool last) { impl_->append(batch, last); }
void ChromeJsonWriter::append(const FrozenSnapshot& batch, bool last) { impl_->append(batch, last); }
void ChromeJsonWriter::finish() { impl_->finish(); }
void ChromeJsonWriter::restart() { impl_->restart(); }
void ChromeJsonWriter::set_counts(DocumentCounts counts) { impl_->set_counts(std::move(counts)); }
void ChromeJsonWriter::set_process(uint32_t pid, std::string name) { impl_->set_process(pid, std::move(name)); }

namespace {
template <typename SnapshotT, typename Out>
void write_whole(const SnapshotT& snapshot, const DocumentInfo& doc, Out& out) {
  write_document<ChromeJsonWriter>(snapshot, doc, out);
}
template <typename SnapshotT, typename Out>
void write_whole(const SnapshotT& snapshot, int64_t origin_ns, const ClockReadings& clocks, Out& out) {
  write_whole(snapshot, DocumentInfo{origin_ns, clocks, {}}, out);
}
}  // namespace

void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       std::string& out) {
  write_whole(snapshot, origin_ns, clocks, out);
}

void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       BlockSink& sink) {
  write_whole(snapshot, origin_ns, clocks, sink);
}

void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       std::string& out) {
  write_whole(snapshot, origin_ns, clocks, out);
}

void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       BlockSink& sink) {
  write_whole(snapshot, origin_ns, clocks, sink);
}

void write_chrome_json(const Snapshot& snapshot, const DocumentInfo& doc, std::string& out) {
  write_whole(snapshot, doc, out);
}
void write_chrome_json(const FrozenSnapshot& snapshot, const DocumentInfo& doc, std::string& out) {
  write_whole(snapshot, doc, out);
}
void write_chrome_json(const FrozenSnapshot& snapshot, const DocumentInfo& doc, BlockSink& sink) {
  write_whole(snapshot, doc, sink);
}
void write_chrome_json(const Snapshot& snapshot, const DocumentInfo& doc, BlockSink& sink) {
  write_whole(snapshot, doc, sink);
}

}  // namespace hotspan
