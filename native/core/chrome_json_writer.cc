// Chrome Trace Event JSON writer. Hot loop: one event per record, formatted
// by hand (no iostreams, no to_string) into a pre-reserved std::string; names
// and timeline names are escaped once per document, attribute objects (JSON
// text produced by the facade) are spliced in without re-parsing.
//
// Conventions a consumer can rely on (json_test.cc checks them):
// - ts = (start_ns - origin_ns) / 1000 in us with exactly 3 decimals, exact to
//   the ns; negative ts (before the origin) are written. dur is the exact
//   difference of the end's ts and ts as doubles (shortest round-trip text,
//   3 decimals when that is it), so ts + dur, added in doubles as readers
//   do, is exactly the end's own ts (see put_dur).
// - args: the attribute members first, then span_id and parent_id (0: no
//   parent), then "error":true / "abandoned":true only when flagged. Attribute
//   text that is not a JSON object is kept as the string member "attrs".
// - Strings: '"', '\' and controls (as \u00XX) escaped, valid UTF-8 as is,
//   invalid bytes as U+FFFD per maximal invalid subpart (what TextDecoder does).
// - Threads, groups and serial tracks: "X"; concurrent tracks: a "b"/"e" pair
//   per span with id = the span id as a string. Events of one timeline are in
//   the snapshot's (end) order; viewers sort by ts.
#include "chrome_json_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <utility>

#include "local_index.h"
#include "utf8_seq.h"

namespace hotspan {
namespace {

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

// ns -> microseconds with exactly 3 decimals: exact to the nanosecond.
inline char* put_us(char* p, int64_t ns) {
  uint64_t u;
  if (ns < 0) {
    *p++ = '-';
    u = 0 - static_cast<uint64_t>(ns);
  } else {
    u = static_cast<uint64_t>(ns);
  }
  p = put_u64(p, u / 1000);
  unsigned r = static_cast<unsigned>(u % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + r / 100);
  p[2] = kDigitPairs[2 * (r % 100)];
  p[3] = kDigitPairs[2 * (r % 100) + 1];
  return p + 4;
}

// ---- dur: what a reader's ts + dur adds up to ----
//
// Readers parse ts and dur as doubles and take ts + dur as the end; some
// (speedscope) first subtract the thread's earliest ts from every ts. With
// both written as exact 3-decimal texts the sum is rounded once more and
// can land one ulp past the end: the next span, which starts at that very
// ns, then looks like an overlap (and a child that ends with its parent like
// one that outlives it). So dur is written as the exact difference of the
// two doubles, d = parse(end's ts text) - parse(ts), in its shortest
// round-trip form: ts + d is then the end's double with no rounding at all,
// and so is (ts - x) + d for any x a reader subtracts exactly. The
// subtraction is exact whenever ts and the end are within a factor of two,
// i.e. for every span shorter than its start's distance from the origin;
// when it is not, dur is a value checked to give ts + dur == end (see
// put_dur). Where the difference is the 3-decimal duration itself, that
// shorter text is written.

constexpr int64_t kExactDoubleNs = int64_t{1} << 53;  // |ns| below: (double)ns is exact

// 10^k for k <= 22, each exactly representable.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// What a correctly rounding parser gives for the text put_us(ns) writes:
// ns / 1000 rounded once, which one IEEE division of two exact doubles does.
inline double parsed_us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// m / 10^q in decimal (m >= 0, q >= 3 digits after the point), trailing
// zeros past the third decimal dropped.
char* put_fixed(char* p, uint64_t m, int q) {
  char frac[24];
  for (int i = q - 1; i >= 0; --i) {
    frac[i] = static_cast<char>('0' + m % 10);
    m /= 10;
  }
  p = put_u64(p, m);
  int n = q;
  while (n > 3 && frac[n - 1] == '0') --n;
  *p++ = '.';
  std::memcpy(p, frac, static_cast<size_t>(n));
  return p + n;
}

// The rare cases: times at 2^53 ns (104 days) or more from the origin, or
// no short decimal found. Parses the texts themselves and steps to the
// largest double d with ts + d <= te: ts + d == te whenever any d gives it.
// None does when dur is in a higher binade than ts and te's last bit is
// odd (every sum is a tie that rounds to even): then the end reads one ulp
// of te early, below 1 ns, which keeps the next span from overlapping.
char* put_dur_exact(char* p, int64_t start, int64_t end) {
  char a[32], b[32];
  char* ae = put_us(a, start);
  char* be = put_us(b, end);
  double ts = 0, te = 0;
  std::from_chars(a, ae, ts);
  std::from_chars(b, be, te);
  // From te - ts, d's ulp is within a few of te's here: few steps.
  double d = te - ts;
  if (ts + d > te) {
    for (int i = 0; i < 64 && ts + d > te; ++i) d = std::nextafter(d, -HUGE_VAL);
  } else {
    for (int i = 0; i < 64 && ts + d < te; ++i) {
      const double up = std::nextafter(d, HUGE_VAL);
      if (ts + up > te) break;
      d = up;
    }
  }
  if (d == 0) return put_us(p, 0);
  const std::to_chars_result r = std::to_chars(p, p + 48, d, std::chars_format::fixed);
  if (d < 0 || ts + d > te || r.ec != std::errc()) return put_us(p, end - start);
  return r.ptr;
}

// v > 0 with 17 significant digits, correctly rounded, in fixed notation:
// always enough for the text to parse back to exactly v. Integer arithmetic
// (v = m * 2^e times a power of ten, 128-bit), a fraction of std::to_chars'
// cost on the path most spans take; nullptr where v is outside its range
// (below ~1e-3 or from 2^52 up).
char* put_digits17(char* p, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  const int biased = static_cast<int>(bits >> 52);
  if (biased == 0) return nullptr;
  const uint64_t m = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  const int shift = 1075 - biased;  // v = m / 2^shift
  if (shift <= 0 || shift > 120) return nullptr;
  static constexpr uint64_t kP10[] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                      10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                      100000000000ull, 1000000000000ull, 10000000000000ull,
                                      100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                      100000000000000000ull, 1000000000000000000ull,
                                      10000000000000000000ull};
  // decimals: 16 - floor(log10 v), from the binary exponent (floor(e log10 2),
  // in fixed point), then corrected by the result.
  int decimals = 16 - (((biased - 1023) * 78913) >> 18);
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (decimals < 0 || decimals > 19) return nullptr;
    // n = round(m * 10^decimals / 2^shift), in 32-bit limbs (no __int128 on every target).
    const uint64_t a = m, b = kP10[decimals];
    const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    uint64_t lo = (p00 & 0xFFFFFFFFu) | (mid << 32);
    uint64_t hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    // + 2^(shift-1), then >> shift.
    const int hs = shift - 1;
    if (hs < 64) {
      const uint64_t add = uint64_t{1} << hs;
      lo += add;
      hi += lo < add;
    } else {
      hi += uint64_t{1} << (hs - 64);
    }
    const uint64_t n = shift < 64 ? (hi << (64 - shift)) | (lo >> shift) : hi >> (shift - 64);
    if (shift < 64 && (hi >> shift) != 0) return nullptr;
    if (n >= kP10[17]) {
      --decimals;
      continue;
    }
    if (n < kP10[16]) {
      ++decimals;
      continue;
    }
    char digits[24];
    const int len = static_cast<int>(put_u64(digits, n) - digits);
    const int whole = len > decimals ? len - decimals : 0;  // digits before the point
    char frac[24];  // the `decimals` digits after it
    int fl = 0;
    for (int z = len; z < decimals; ++z) frac[fl++] = '0';
    for (int i = whole; i < len; ++i) frac[fl++] = digits[i];
    while (fl > 3 && frac[fl - 1] == '0') --fl;
    if (whole > 0) {
      std::memcpy(p, digits, static_cast<size_t>(whole));
      p += whole;
    } else {
      *p++ = '0';
    }
    *p++ = '.';
    std::memcpy(p, frac, static_cast<size_t>(fl));
    return p + fl;
  }
  return nullptr;
}

// The dur of [start, end] (ns from the origin, start <= end).
inline char* put_dur(char* p, int64_t start, int64_t end) {
  const int64_t d = end - start;
  if (start > -kExactDoubleNs && end < kExactDoubleNs) {
    const double ts = parsed_us(start);
    const double te = parsed_us(end);
    const double hi = te - ts;
    const double back = hi - te;  // TwoSum: what the subtraction rounded off
    const double lo = (te - (hi - back)) + (-ts - back);
    if (lo == 0) {
      if (hi == parsed_us(d)) return put_us(p, d);
      if (char* e = put_digits17(p, hi)) return e;
      const std::to_chars_result r = std::to_chars(p, p + 48, hi, std::chars_format::fixed);
      if (r.ec == std::errc()) return r.ptr;
    }
    // Not exact: the interval of doubles x with ts + x == te is about one
    // ulp of te wide, centred on te - ts: try the decimals around that
    // width, from one fewer than it needs, the candidate nearest the centre.
    const double mag = std::fabs(te) + std::fabs(ts);  // > 0: te != ts here
    const int need = static_cast<int>(std::ceil((52 - std::ilogb(mag)) * 0.30103));
    for (int q = std::max(4, need - 1); q <= std::min(22, need + 2); ++q) {
      const double scaled = hi * kPow10[q] + lo * kPow10[q];
      if (!(scaled >= 0 && scaled < 9007199254740992.0)) break;
      const auto m = static_cast<uint64_t>(std::llround(scaled));
      if (ts + static_cast<double>(m) / kPow10[q] == te) return put_fixed(p, m, q);
    }
  }
  return put_dur_exact(p, start, end);
}

template <size_t N>
inline char* put_lit(char* p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + N - 1;
}

// Appends the body of a JSON string (no quotes). Quote, backslash and control
// characters are escaped (controls as \u00XX); valid UTF-8 passes through;
// bytes that are not valid UTF-8 become U+FFFD so the document stays valid.
void append_escaped(std::string& out, const char* s, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  const unsigned char* b = reinterpret_cast<const unsigned char*>(s);
  size_t i = 0, run = 0;  // [run, i) is a pending verbatim run
  auto flush = [&]() {
    if (i > run) out.append(s + run, i - run);
  };
  while (i < n) {
    unsigned c = b[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c < 0x80) {
      flush();
      if (c == '"') {
        out.append("\\\"", 2);
      } else if (c == '\\') {
        out.append("\\\\", 2);
      } else {
        char e[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out.append(e, 6);
      }
      run = ++i;
      continue;
    }
    size_t bad = 0;
    const size_t len = utf8_seq(b, n, i, &bad);
    if (len != 0) {
      i += len;
      continue;
    }
    flush();
    out.append("\\ufffd", 6);
    i += bad;
    run = i;
  }
  flush();
}

std::string escaped(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  append_escaped(out, s.data(), s.size());
  return out;
}

inline bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The members of an attribute object, for splicing into "args": "{...}" ->
// "...", trimmed. Empty for "", "{}" and "{ }".
struct AttrText {
  const char* p = nullptr;
  size_t n = 0;
  bool object = true;  // false: not an object; written as an escaped string
};

AttrText attr_members(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_ws(s[b])) ++b;
  while (e > b && is_ws(s[e - 1])) --e;
  AttrText t;
  if (b == e) return t;
  if (e - b < 2 || s[b] != '{' || s[e - 1] != '}') {
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


// The document into `out`; with a sink, `out` is handed over in blocks at
// event boundaries (and once at the end) and left empty.
template <typename SnapshotT>
void write_document(const SnapshotT& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                    std::string& out, BlockSink* sink) {
  // Size estimate: ~200 bytes per complete event plus attribute text.
  size_t estimate = 128;
  for (const auto& tl : snapshot.timelines) {
    estimate += 200 + 2 * tl.name.size() + 220 * tl.records.size();
    if (tl.kind == TimelineKind::kTrack) estimate += 120 * tl.records.size();
    for (const auto& a : tl.attrs) estimate += a.second.size();
  }
  // Streaming: one block plus the largest event that may overshoot it.
  const size_t reserve =
      out.size() + (sink != nullptr ? std::min(estimate, sink->block_bytes() + (64 << 10)) : estimate);
  out.reserve(reserve);
  auto hand_over = [&]() {
    sink->take_block(out, out.size());
    // The buffer handed back (maybe another one) keeps its capacity: the
    // next block reuses its pages.
    out.clear();
    out.reserve(reserve);
  };
  auto boundary = [&]() {
    if (sink != nullptr && out.size() >= sink->block_bytes()) hand_over();
  };

  std::vector<std::string> names;
  names.reserve(snapshot.names.size());
  for (const std::string& n : snapshot.names) names.push_back(escaped(n));

  char buf[256];
  char* p;
  bool first = true;
  auto sep = [&]() {
    if (!first) out.append(",\n", 2);
    first = false;
  };

  out.append("{\"traceEvents\":[\n");
  sep();
  out.append(
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
      "\"args\":{\"name\":\"hotspan\"}}");
  for (const auto& tl : snapshot.timelines) {
    sep();
    p = put_lit(buf, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":");
    p = put_u64(p, tl.id);
    p = put_lit(p, ",\"args\":{\"name\":\"");
    out.append(buf, static_cast<size_t>(p - buf));
    append_escaped(out, tl.name.data(), tl.name.size());
    out.append("\"}}", 3);
    sep();
    p = put_lit(buf, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":");
    p = put_u64(p, tl.id);
    p = put_lit(p, ",\"args\":{\"sort_index\":");
    p = put_u64(p, tl.id);
    p = put_lit(p, "}}");
    out.append(buf, static_cast<size_t>(p - buf));
  }

  const std::string unknown_name = "?";
  for (const auto& tl : snapshot.timelines) {
    const bool track = tl.kind == TimelineKind::kTrack;
    const bool complete = !track || tl.serial;  // serial tracks never overlap: X
    const char* cat = tl.kind == TimelineKind::kGroups ? "group" : track ? "async" : "span";
    const size_t cat_len = std::strlen(cat);

    // ",\"pid\":1,\"tid\":<id>" is the same for every event of the timeline.
    char tid_part[32];
    char* tp = put_lit(tid_part, ",\"pid\":1,\"tid\":");
    tp = put_u64(tp, tl.id);
    const size_t tid_len = static_cast<size_t>(tp - tid_part);

    LocalIndex<std::string> attrs(tl.attrs, tl.records.size());
    LocalIndex<uint64_t> foreign(tl.foreign_parents, tl.records.size());

    for (const SpanRecord& r : tl.records) {
      const std::string& name = r.name < names.size() ? names[r.name] : unknown_name;
      const uint64_t span_id = make_span_id(tl.id, r.local_id);
      uint64_t parent_id = 0;
      if (r.flags & kFlagParentElsewhere) {
        const uint64_t* f = foreign.find(r.local_id);
        if (f) parent_id = *f;
      } else if (r.parent_local != 0) {
        parent_id = make_span_id(tl.id, r.parent_local);
      }

      // {"name":"<name>","cat":"<cat>","ph":"X","ts":..,"dur":..,"pid":1,"tid":..,
      sep();
      out.append("{\"name\":\"", 9);
      out.append(name);
      p = put_lit(buf, "\",\"cat\":\"");
      std::memcpy(p, cat, cat_len);
      p += cat_len;
      if (complete) {
        p = put_lit(p, "\",\"ph\":\"X\",\"ts\":");
        p = put_us(p, r.start_ns - origin_ns);
        p = put_lit(p, ",\"dur\":");
        p = put_dur(p, r.start_ns - origin_ns, r.end_ns - origin_ns);
      } else {
        p = put_lit(p, "\",\"ph\":\"b\",\"ts\":");
        p = put_us(p, r.start_ns - origin_ns);
      }
      std::memcpy(p, tid_part, tid_len);
      p += tid_len;
      if (!complete) {
        p = put_lit(p, ",\"id\":\"");
        p = put_u64(p, span_id);
        *p++ = '"';
      }
      p = put_lit(p, ",\"args\":{");
      out.append(buf, static_cast<size_t>(p - buf));

      // "args": the attribute object's members, then ours.
      if (const std::string* a = attrs.find(r.local_id)) {
        AttrText t = attr_members(*a);
        if (t.n != 0) {
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
      p = put_lit(buf, "\"span_id\":");
      p = put_u64(p, span_id);
      p = put_lit(p, ",\"parent_id\":");
      p = put_u64(p, parent_id);
      if (r.flags & kFlagError) p = put_lit(p, ",\"error\":true");
      if (r.flags & kFlagAbandoned) p = put_lit(p, ",\"abandoned\":true");
      p = put_lit(p, "}}");
      out.append(buf, static_cast<size_t>(p - buf));

      if (!complete) {
        // The matching end event: same name, category, id and thread.
        sep();
        out.append("{\"name\":\"", 9);
        out.append(name);
        p = put_lit(buf, "\",\"cat\":\"async\",\"ph\":\"e\",\"ts\":");
        p = put_us(p, r.end_ns - origin_ns);
        std::memcpy(p, tid_part, tid_len);
        p += tid_len;
        p = put_lit(p, ",\"id\":\"");
        p = put_u64(p, span_id);
        p = put_lit(p, "\"}");
        out.append(buf, static_cast<size_t>(p - buf));
      }
      boundary();
    }
  }
  // Which clock ts is on: performance.now() (us), whose zero is
  // origin_monotonic_ns on CLOCK_MONOTONIC and origin_unix_ns on the Unix
  // epoch (REALTIME then, less the MONOTONIC time since the origin). Strings:
  // ns past 2^53 are not exact as JSON numbers.
  p = put_lit(buf, "\n],\"displayTimeUnit\":\"ms\",\"metadata\":{\"hotspan_clock\":{"
                   "\"ts_axis\":\"performance.now() in us\",\"origin_monotonic_ns\":\"");
  p = put_i64(p, origin_ns);
  p = put_lit(p, "\",\"origin_unix_ns\":\"");
  p = put_i64(p, clocks.realtime_ns - (clocks.monotonic_ns - origin_ns));
  p = put_lit(p, "\"}}}\n");
  out.append(buf, static_cast<size_t>(p - buf));
  if (sink != nullptr) hand_over();
}

}  // namespace

void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       std::string& out) {
  write_document(snapshot, origin_ns, clocks, out, nullptr);
}

void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       BlockSink& sink) {
  std::string block;
  write_document(snapshot, origin_ns, clocks, block, &sink);
}

void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       std::string& out) {
  write_document(snapshot, origin_ns, clocks, out, nullptr);
}

void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       BlockSink& sink) {
  std::string block;
  write_document(snapshot, origin_ns, clocks, block, &sink);
}

}  // namespace hotspan
