// Chrome Trace Event JSON writer: a golden document, escaping and timestamp
// formatting checks, and a round trip through Node's JSON.parse checked event
// by event by check-chrome-json.cjs (beside this file).
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "write/chrome_json_writer.h"
#include "snapshot_builders.h"

namespace {

using namespace hotspan;

using hotspan_test::rec;
using hotspan_test::timeline;

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

void report_mismatch(int line, const std::string& got, const std::string& want) {
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  std::fprintf(stderr, "--- got:\n%s\n--- want:\n%s\n", got.c_str(), want.c_str());
  check::fail(__FILE__, line, check::fmt("golden document differs at byte %zu", i));
}

void test_golden() {
  Snapshot s;
  s.names = {"main.work", "child", "grp", "io"};
  const int64_t origin = 1000000;

  SnapshotTimeline main = timeline(1, "main", TimelineKind::kJs);
  main.records.push_back(rec(2, 1, 1, 1000500, 1001500, 1, kFlagAttrs | kFlagError));
  main.records.push_back(rec(1, 0, 0, 1000000, 1002001, 0, kFlagAttrs | kFlagAbandoned));
  main.attrs = {{2, " {\"k\":1,\"s\":\"v\"} "}, {1, "{}"}};
  s.timelines.push_back(main);

  SnapshotTimeline groups = timeline(2, "groups", TimelineKind::kGroups);
  groups.records.push_back(rec(1, 0, 2, 999999, 1003000));
  s.timelines.push_back(groups);

  SnapshotTimeline track = timeline(3, "track: gpu0", TimelineKind::kTrack);
  track.records.push_back(rec(1, 0, 3, 1001000, 1004000, 0, kFlagAsync | kFlagParentElsewhere));
  track.foreign_parents = {{1, make_span_id(1, 2)}};
  s.timelines.push_back(track);

  std::string out = "PREFIX";
  write_chrome_json(s, origin, hotspan_test::kTestClocks, out);
  const std::string want =
      "PREFIX{\"traceEvents\":[\n"
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"hotspan\"}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"main\"}},\n"
      "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"sort_index\":1}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"groups\"}},\n"
      "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"sort_index\":2}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":3,\"args\":{\"name\":\"track: gpu0\"}},\n"
      "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":3,\"args\":{\"sort_index\":3}},\n"
      "{\"name\":\"child\",\"cat\":\"span\",\"ph\":\"X\",\"ts\":0.5,\"dur\":1,\"pid\":1,\"tid\":1,"
      "\"args\":{\"k\":1,\"s\":\"v\",\"span_id\":4294967298,\"parent_id\":4294967297,\"error\":true}},\n"
      "{\"name\":\"main.work\",\"cat\":\"span\",\"ph\":\"X\",\"ts\":0,\"dur\":2.0009765625,\"pid\":1,\"tid\":1,"
      "\"args\":{\"span_id\":4294967297,\"parent_id\":0,\"abandoned\":true}},\n"
      "{\"name\":\"grp\",\"cat\":\"group\",\"ph\":\"X\",\"ts\":-0.0009765625,\"dur\":3.0009765625,\"pid\":1,\"tid\":2,"
      "\"args\":{\"span_id\":8589934593,\"parent_id\":0}},\n"
      "{\"name\":\"io\",\"cat\":\"async\",\"ph\":\"b\",\"ts\":1,\"pid\":1,\"tid\":3,\"id\":\"12884901889\","
      "\"args\":{\"span_id\":12884901889,\"parent_id\":4294967298}},\n"
      "{\"name\":\"io\",\"cat\":\"async\",\"ph\":\"e\",\"ts\":4,\"pid\":1,\"tid\":3,\"id\":\"12884901889\"}\n"
      "],\"displayTimeUnit\":\"ms\",\"metadata\":{\"hotspan_clock\":{\"ts_axis\":\"performance.now() in us\","
      "\"ts_grid\":\"1/1024 us: ts and dur are round(ns*1024/1000)/1024, exact doubles; ns = round(us*1000)\","
      "\"origin_monotonic_ns\":\"1000000\",\"origin_unix_ns\":\"1766361600001000000\"}}}\n";
  if (out != want) {
    report_mismatch(__LINE__, out, want);
  }

  // A serial track never overlaps itself: written as complete events.
  SnapshotTimeline serial = timeline(3, "track: db", TimelineKind::kTrack);
  serial.records.push_back(rec(1, 0, 3, 1001000, 1004000, 0, kFlagAsync));
  serial.serial = true;
  {
    Snapshot s2;
    s2.names = s.names;
    s2.timelines.push_back(serial);
    std::string o2;
    write_chrome_json(s2, origin, hotspan_test::kTestClocks, o2);
    CHECK(contains(o2, "{\"name\":\"io\",\"cat\":\"async\",\"ph\":\"X\",\"ts\":1,\"dur\":3,"
                         "\"pid\":1,\"tid\":3,\"args\":{\"span_id\":12884901889,\"parent_id\":0}}"));
    CHECK(!contains(o2, "\"ph\":\"b\""));
  }

  // An empty snapshot is still a complete document.
  Snapshot empty;
  std::string e;
  write_chrome_json(empty, 0, hotspan_test::kTestClocks, e);
  const std::string want_empty =
      "{\"traceEvents\":[\n"
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"hotspan\"}}\n"
      "],\"displayTimeUnit\":\"ms\",\"metadata\":{\"hotspan_clock\":{\"ts_axis\":\"performance.now() in us\","
      "\"ts_grid\":\"1/1024 us: ts and dur are round(ns*1024/1000)/1024, exact doubles; ns = round(us*1000)\","
      "\"origin_monotonic_ns\":\"0\",\"origin_unix_ns\":\"1766361600000000000\"}}}\n";
  if (e != want_empty) {
    report_mismatch(__LINE__, e, want_empty);
  }
}

// The name as it appears in the document for one span named `raw`.
std::string written_name(const std::string& raw) {
  Snapshot s;
  s.names = {raw};
  SnapshotTimeline t = timeline(1, "t", TimelineKind::kJs);
  t.records.push_back(rec(1, 0, 0, 0, 1));
  s.timelines.push_back(t);
  std::string out;
  write_chrome_json(s, 0, hotspan_test::kTestClocks, out);
  const std::string key = "{\"name\":\"";
  size_t at = out.find(key + "", out.find("\"tid\":1,\"args\":{\"sort_index\""));
  if (at == std::string::npos) return "<missing>";
  at += key.size();
  size_t end = out.find("\",\"cat\":\"span\"", at);
  if (end == std::string::npos) return "<missing>";
  return out.substr(at, end - at);
}

void expect_name(const std::string& raw, const std::string& want) {
  std::string got = written_name(raw);
  if (got != want) {
    check::fail(__FILE__, __LINE__, "escape: got [" + got + "] want [" + want + "]");
  }
}

void test_escaping() {
  expect_name("plain", "plain");
  expect_name("", "");
  expect_name("a\"b\\c/d", "a\\\"b\\\\c/d");
  expect_name("l1\nl2\tt\r\b\f", "l1\\u000al2\\u0009t\\u000d\\u0008\\u000c");
  expect_name(std::string("nul\0x\x1f\x7f", 7), "nul\\u0000x\\u001f\x7f");
  expect_name("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89");
  expect_name("\xe2\x80\xa8", "\xe2\x80\xa8");  // U+2028 is legal in JSON strings
  // Not UTF-8: one U+FFFD per maximal invalid subpart.
  expect_name("x\xffy", "x\\ufffdy");
  expect_name("t\xe6\x97", "t\\ufffd");                     // truncated 3-byte sequence
  expect_name("o\xc0\xaf", "o\\ufffd\\ufffd");              // overlong
  expect_name("s\xed\xa0\x80", "s\\ufffd\\ufffd\\ufffd");   // surrogate
  expect_name("b\xf4\x90\x80\x80", "b\\ufffd\\ufffd\\ufffd\\ufffd");  // > U+10FFFF
  expect_name("\xf0\x9f\x8e\"", "\\ufffd\\\"");             // truncated 4-byte then a quote

  // Timeline names are escaped too; attribute text is spliced verbatim.
  Snapshot s;
  s.names = {"n"};
  SnapshotTimeline t = timeline(7, "th\"read\n", TimelineKind::kNative);
  t.records.push_back(rec(1, 0, 0, 10, 20, 0, kFlagAttrs));
  t.attrs = {{1, "{\"q\":\"say \\\"hi\\\"\\n\",\"n\":-1.5e3}"}};
  s.timelines.push_back(t);
  std::string out;
  write_chrome_json(s, 0, hotspan_test::kTestClocks, out);
  CHECK(contains(out, "\"args\":{\"name\":\"th\\\"read\\u000a\"}"));
  CHECK(contains(out, "\"args\":{\"q\":\"say \\\"hi\\\"\\n\",\"n\":-1.5e3,\"span_id\":30064771073,\"parent_id\":0}"));

  // Attribute text that is not an object stays valid JSON, as a string.
  t.attrs = {{1, "oops\""}};
  s.timelines[0] = t;
  out.clear();
  write_chrome_json(s, 0, hotspan_test::kTestClocks, out);
  CHECK(contains(out, "\"args\":{\"attrs\":\"oops\\\"\",\"span_id\":30064771073,"));
}

// "ts" and "dur" text for one span, as written.
std::string written_times(int64_t origin, int64_t start, int64_t end) {
  Snapshot s;
  s.names = {"n"};
  SnapshotTimeline t = timeline(1, "t", TimelineKind::kJs);
  t.records.push_back(rec(1, 0, 0, start, end));
  s.timelines.push_back(t);
  std::string out;
  write_chrome_json(s, origin, hotspan_test::kTestClocks, out);
  size_t at = out.find("\"ts\":");
  size_t end_at = out.find(",\"pid\"", at);
  if (at == std::string::npos || end_at == std::string::npos) return "<missing>";
  return out.substr(at, end_at - at);
}

void expect_times(int64_t origin, int64_t start, int64_t end, const std::string& want) {
  std::string got = written_times(origin, start, end);
  if (got != want) {
    check::fail(__FILE__, __LINE__, "times: got [" + got + "] want [" + want + "]");
  }
}

void test_times() {
  expect_times(0, 0, 0, "\"ts\":0,\"dur\":0");
  // 1 ns is one grid unit; 11 ns round to 11.264 -> 11 units.
  expect_times(0, 1, 11, "\"ts\":0.0009765625,\"dur\":0.009765625");
  // 999 ns: 1022.976 -> 1023 units; 1999 ns: 2047 units. dur, 1024 units, is
  // the difference of the grid values, so ts + dur is the end's ts.
  expect_times(0, 999, 1999, "\"ts\":0.9990234375,\"dur\":1");
  expect_times(1000, 500, 1000, "\"ts\":-0.5,\"dur\":0.5");
  expect_times(2000, 500, 1000, "\"ts\":-1.5,\"dur\":0.5");  // both ends before the origin
  expect_times(5, 0, 123456789012, "\"ts\":-0.0048828125,\"dur\":123456789.01171875");
  // A realistic raw monotonic origin (days of uptime) and an hour-long trace.
  expect_times(864000123456789, 864000123456789 + 3600000000001, 864000123456789 + 3600000000001 + 99,
               "\"ts\":3600000000.0009765625,\"dur\":0.0986328125");
  // The extremes of int64 ns: no overflow, the sign kept, and a span across
  // all of int64 saturates (2^64 units) rather than wrapping.
  expect_times(0, INT64_MAX - 1, INT64_MAX, "\"ts\":9223372036854775.8056640625,\"dur\":0.0009765625");
  expect_times(0, INT64_MIN + 1, INT64_MIN + 2, "\"ts\":-9223372036854775.806640625,\"dur\":0.0009765625");
  expect_times(0, INT64_MIN, INT64_MAX, "\"ts\":-9223372036854775.8076171875,\"dur\":18014398509481983.9990234375");
}

double parse_double(const std::string& text) {
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) check::fail(__FILE__, __LINE__, "unparsable " + text);
  return v;
}

// The text between `key` and the next ',' in `s`.
std::string field(const std::string& s, const std::string& key) {
  const size_t at = s.find(key);
  if (at == std::string::npos) return "";
  const size_t b = at + key.size();
  return s.substr(b, s.find(',', b) - b);
}

// The grid unit of ns computed apart from the writer: floor((256 ns + 125) / 250) in 128 bits.
int64_t expected_units(int64_t ns) {
  const __int128 x = static_cast<__int128>(ns) * 256 + 125;
  __int128 q = x / 250;
  if (x % 250 != 0 && x < 0) --q;
  return static_cast<int64_t>(q);
}

// ns back from a grid text's double, as the README says: round(us * 1000).
int64_t ns_of(double us) { return std::llround(us * 1000); }

// Spans back to back (each starts at the ns its predecessor ended) and
// spans ending with their parent: a reader adding ts + dur in doubles must
// get exactly the double of the end's own ts text, or it sees overlaps and
// loses containment; rebased on a thread's first ts (speedscope) the same.
// Every text is units / 1024 exactly, and round(us * 1000) gives the ns.
void test_dur_sums() {
  std::mt19937_64 rng(11);
  const int64_t kGridExact = int64_t{1} << 53;  // |units| below: the text is an exact double
  const int64_t kNsBack = int64_t{1} << 47;     // |ns| below: round(us * 1000) is exact in doubles
  const int64_t offsets[] = {-5000000,        0,           499182053, 3600000000001, 86400000000000,
                             -86400000000000, kNsBack - 2000000000, int64_t{1} << 52, int64_t{1} << 60};
  size_t checked = 0, rebased = 0, beyond = 0;
  for (int64_t offset : offsets) {
    for (int chain = 0; chain < 40; ++chain) {
      int64_t start = offset + static_cast<int64_t>(rng() % 1000000000);
      const std::string first_ts = field(written_times(0, start, start) + ",", "\"ts\":");
      for (int k = 0; k < 50; ++k) {
        const int64_t dur = (rng() & 7) == 0 ? 0
                            : (rng() & 1) ? static_cast<int64_t>(rng() % 100000)
                                          : static_cast<int64_t>(rng() % 10000000000ull);
        const std::string times = written_times(0, start, start + dur);
        const std::string ts_text = field(times + ",", "\"ts\":");
        const std::string dur_text = field(times + ",", "\"dur\":");
        const std::string end_text = field(written_times(0, start + dur, start + dur) + ",", "\"ts\":");
        const size_t dot = dur_text.find('.');
        CHECK(dot == std::string::npos || dur_text.size() - dot - 1 <= 10);
        const int64_t u0 = expected_units(start), u1 = expected_units(start + dur);
        if (std::llabs(u1) >= kGridExact || std::llabs(u0) >= kGridExact) {
          ++beyond;  // doubles coarser than the grid: only the duration is checked
          CHECK(parse_double(dur_text) * 1024 == static_cast<double>(u1 - u0));
          start += dur;
          continue;
        }
        const double ts = parse_double(ts_text), d = parse_double(dur_text), end = parse_double(end_text);
        // The texts are the grid values themselves.
        CHECK(ts * 1024 == static_cast<double>(u0) && d * 1024 == static_cast<double>(u1 - u0) &&
              end * 1024 == static_cast<double>(u1));
        if (ts + d != end) check::fail(__FILE__, __LINE__, "ts " + ts_text + " + dur " + dur_text + " != end " + end_text);
        const double o = parse_double(first_ts);
        if ((ts - o) + d != end - o) {
          check::fail(__FILE__, __LINE__, "rebased: ts " + ts_text + " + dur " + dur_text + " != end " + end_text);
        }
        ++rebased;
        // The ns back, exactly.
        if (std::llabs(start + dur) < kNsBack && std::llabs(start) < kNsBack) {
          CHECK_EQ(ns_of(ts), start);
          CHECK_EQ(ns_of(ts + d), start + dur);
        }
        ++checked;
        start += dur;
      }
    }
  }
  CHECK(checked > 0 && beyond > 0 && rebased == checked);
  std::printf("json_test: %zu ts + dur sums exact (also rebased), %zu past 2^53 grid units\n", checked, beyond);
}

// Every ns maps to its own grid value (distinct ns stay distinct, in order)
// and round(us * 1000) gives it back; the sign is symmetric.
void test_grid_round_trip() {
  std::mt19937_64 rng(7);
  std::vector<int64_t> ns;
  for (int64_t v = -5000; v <= 5000; ++v) ns.push_back(v);
  for (int i = 0; i < 20000; ++i) {
    const int64_t base = static_cast<int64_t>(rng() % (uint64_t{1} << 47));
    ns.push_back((rng() & 1) ? base : -base);
  }
  double prev = -HUGE_VAL;
  for (size_t i = 0; i < ns.size(); ++i) {
    const std::string text = field(written_times(0, ns[i], ns[i]) + ",", "\"ts\":");
    const double us = parse_double(text);
    CHECK_EQ(ns_of(us), ns[i]);
    CHECK(us * 1024 == static_cast<double>(expected_units(ns[i])));
    if (i > 0 && i <= 10000) CHECK(us > prev);  // the consecutive range
    prev = us;
  }
}

std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string h;
  for (unsigned char c : s) {
    h.push_back(d[c >> 4]);
    h.push_back(d[c & 15]);
  }
  return h;
}

std::string script_path() {
  if (const char* dir = std::getenv("HOTSPAN_TEST_DIR")) return std::string(dir) + "/check-chrome-json.cjs";
  std::string f = __FILE__;
  size_t slash = f.find_last_of('/');
  return (slash == std::string::npos ? std::string(".") : f.substr(0, slash)) + "/check-chrome-json.cjs";
}

std::string temp_path(const char* suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/hotspan_json_test_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0) return "";
  close(fd);
  std::string base(buf.data());
  std::string path = base + suffix;
  if (std::rename(base.c_str(), path.c_str()) != 0) return base;
  return path;
}

// A hand-made snapshot with nasty names, every timeline kind, parents across
// timelines, flags and attributes; written, then checked by node.
void test_node_round_trip() {
  Snapshot s;
  s.names = {
      "plain",
      "quote\"inside",
      "back\\slash\\",
      "new\nline\ttab\rcr",
      std::string("ctrl\x01\x1f\x7f nul\0end", 15),
      "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89",
      "line sep \xe2\x80\xa8 para \xe2\x80\xa9",
      "</script><!--",
      "",
      std::string(300, 'L') + "\"",
      "bad \xff\xfe bytes",
      "trunc \xe6\x97",
      "surr \xed\xa0\x80 over \xc0\xaf",
      "{\"json\":\"in a name\"}",
  };
  const int64_t origin = 864000123456789;  // raw monotonic ns at performance.now() == 0
  std::mt19937_64 rng(2024);

  const char* attr_texts[] = {
      "{}",
      "{ }",
      "{\"k\":\"v\"}",
      " {\"num\":-12.5e-3,\"int\":42,\"t\":true,\"f\":false,\"z\":null} ",
      "{\"q\":\"say \\\"hi\\\"\\n\\\\ \\u00e9 \\ud83c\\udf89\",\"unicode\":\"\xe6\x97\xa5\"}",
      "{\n  \"nested\": {\"a\": [1, 2, {\"b\": \"c\"}]},\n  \"empty\": \"\"\n}",
  };

  std::string exp;
  auto flags_text = [](uint16_t f) {
    std::string t;
    if (f & kFlagError) t += 'e';
    if (f & kFlagAbandoned) t += 'a';
    return t.empty() ? std::string("-") : t;
  };

  struct TlSpec {
    uint32_t id;
    std::string name;
    TimelineKind kind;
    bool serial;
  };
  const TlSpec specs[] = {
      {1, "main", TimelineKind::kJs, false},
      {2, "worker \"2\"\n", TimelineKind::kJs, false},
      {3, "native: enc\xc3\xb6" "der#3", TimelineKind::kNative, false},
      {4, "groups", TimelineKind::kGroups, false},
      {5, "track: gpu0 \\ \xf0\x9f\x9a\x80", TimelineKind::kTrack, false},
      {6, "empty timeline", TimelineKind::kNative, false},
      {7, "track: db (serial)", TimelineKind::kTrack, true},
  };
  size_t total = 0;
  for (const TlSpec& spec : specs) {
    SnapshotTimeline t = timeline(spec.id, spec.name, spec.kind);
    t.serial = spec.serial;
    exp += "T\t" + std::to_string(spec.id) + "\t" + hex(spec.name) + "\n";
    size_t n = spec.id == 6 ? 0 : 300 + rng() % 200;
    for (uint32_t local = 1; local <= n; ++local) {
      // Start anywhere from 1 ms before the origin to ~1 h after, to the ns.
      int64_t start = origin - 1000000 + static_cast<int64_t>(rng() % 3600000000000ull);
      int64_t dur = (rng() & 3) == 0 ? static_cast<int64_t>(rng() % 1000)
                                     : static_cast<int64_t>(rng() % 5000000000ull);
      uint32_t name = static_cast<uint32_t>(rng() % s.names.size());
      uint16_t flags = 0;
      if (rng() % 5 == 0) flags |= kFlagError;
      if (rng() % 7 == 0) flags |= kFlagAbandoned;
      uint32_t parent = 0;
      uint64_t parent_id = 0;
      if (spec.kind == TimelineKind::kTrack) {
        flags |= kFlagAsync;
        if (rng() % 2) {
          // Parent on another timeline.
          flags |= kFlagParentElsewhere;
          parent_id = make_span_id(1 + static_cast<uint32_t>(rng() % 3), 1 + static_cast<uint32_t>(rng() % 300));
          t.foreign_parents.emplace_back(local, parent_id);
        }
      } else if (local > 1 && rng() % 3) {
        parent = 1 + static_cast<uint32_t>(rng() % (local - 1));
        parent_id = make_span_id(spec.id, parent);
      }
      std::string attrs = "-";
      if (rng() % 3 == 0) {
        const char* a = attr_texts[rng() % (sizeof attr_texts / sizeof attr_texts[0])];
        t.attrs.emplace_back(local, a);
        flags |= kFlagAttrs;
        attrs = hex(a);
      }
      t.records.push_back(rec(local, parent, name, start, start + dur, parent ? 1 : 0, flags));
      std::string ts = std::to_string(start - origin);
      if (spec.kind == TimelineKind::kTrack && !spec.serial) {
        exp += "A\t" + std::to_string(make_span_id(spec.id, local)) + "\t" + hex(s.names[name]) + "\t" +
               std::to_string(spec.id) + "\t" + ts + "\t" + std::to_string(start + dur - origin) + "\t" +
               std::to_string(parent_id) + "\t" + flags_text(flags) + "\t" + attrs + "\n";
      } else {
        const char* cat = spec.kind == TimelineKind::kGroups ? "group"
                          : spec.kind == TimelineKind::kTrack ? "async"
                                                               : "span";
        exp += "X\t" + std::to_string(make_span_id(spec.id, local)) + "\t" + hex(s.names[name]) + "\t" + cat +
               "\t" + std::to_string(spec.id) + "\t" + ts + "\t" + std::to_string(dur) + "\t" +
               std::to_string(parent_id) + "\t" + flags_text(flags) + "\t" + attrs + "\n";
      }
    }
    // Attribute lists in a different order than the records.
    std::shuffle(t.attrs.begin(), t.attrs.end(), rng);
    total += t.records.size();
    s.timelines.push_back(std::move(t));
  }

  std::string out;
  write_chrome_json(s, origin, hotspan_test::kTestClocks, out);
  std::string trace = temp_path(".json");
  std::string expf = temp_path(".tsv");
  CHECK(!trace.empty() && !expf.empty());
  {
    std::ofstream f(trace, std::ios::binary);
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    std::ofstream g(expf, std::ios::binary);
    g.write(exp.data(), static_cast<std::streamsize>(exp.size()));
  }
  const char* node = std::getenv("HOTSPAN_NODE");
  std::string cmd = std::string(node && *node ? node : "node") + " '" + script_path() + "' '" + trace + "' '" +
                    expf + "'";
  int rc = std::system(cmd.c_str());
  if (rc != 0) {
    check::fail(__FILE__, __LINE__,
                "node validation failed (rc " + std::to_string(rc) + "): " + cmd + "\n  trace kept at " + trace);
  } else {
    std::remove(trace.c_str());
    std::remove(expf.c_str());
  }
  std::printf("json_test: round trip of %zu spans\n", total);
}

}  // namespace

// A tracer's document names the process by its TracerOptions::process_name,
// escaped as every string.
void test_process_name() {
  TracerOptions o;
  o.process_name = "api \"srv\"\\\n";
  std::shared_ptr<Tracer> t = Tracer::create(o);
  CHECK(t->process_name() == o.process_name);
  std::string out;
  write_chrome_json(*t, out);
  const std::string want = "\"pid\":" + std::to_string(getpid()) + ",\"tid\":0,\"args\":{\"name\":\"api \\\"srv\\\"\\\\\\u000a\"}}";
  if (!contains(out, want)) check::fail(__FILE__, __LINE__, "process_name: " + out.substr(0, 200));
  t->close();
}

int main() {
  RUN_TEST(test_golden);
  RUN_TEST(test_escaping);
  RUN_TEST(test_times);
  RUN_TEST(test_dur_sums);
  RUN_TEST(test_grid_round_trip);
  RUN_TEST(test_node_round_trip);
  RUN_TEST(test_process_name);
  return check::result("json_test");
}
