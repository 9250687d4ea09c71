// Chrome Trace Event JSON writer. Hot loop: one event per record, formatted
// by hand (no iostreams, no to_string) into a pre-reserved std::string; names
// and timeline names are escaped once per document, attribute objects (JSON
// text produced by the facade) are checked (one strict scan) and spliced in.
//
// Conventions a consumer can rely on (json_test.cc checks them):
// - ts = (start_ns - origin_ns) / 1000 and dur in us with exactly 3 decimals,
//   so both are exact to the ns; negative ts (before the origin) are written.
// - args: the attribute members first, then span_id and parent_id (0: no
//   parent), then "error":true / "abandoned":true only when flagged. Attribute
//   text that is not exactly one JSON object is kept as the string member
//   "attrs"; invalid UTF-8 in it is repaired as in names.
// - Strings: '"', '\' and controls (as \u00XX) escaped, valid UTF-8 as is,
//   invalid bytes as U+FFFD per maximal invalid subpart (what TextDecoder does).
// - Threads, groups and serial tracks: "X"; concurrent tracks: a "b"/"e" pair
//   per span with id = the span id as a string. Events of one timeline are in
//   the snapshot's (end) order; viewers sort by ts.
#include "chrome_json_writer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "json_text.h"
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


// The document into `out`; with a sink, `out` is handed over in blocks at
// event boundaries (and once at the end) and left empty.
template <typename SnapshotT>
void write_document(const SnapshotT& snapshot, int64_t origin_ns, std::string& out,
                    BlockSink* sink) {
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
  std::string attr_scratch;  // a repaired attribute text, reused
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
        p = put_us(p, r.end_ns - r.start_ns);
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
        AttrText t = attr_members(*a, attr_scratch);
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
  out.append("\n],\"displayTimeUnit\":\"ms\"}\n");
  if (sink != nullptr) hand_over();
}

}  // namespace

void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, std::string& out) {
  write_document(snapshot, origin_ns, out, nullptr);
}

void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, BlockSink& sink) {
  std::string block;
  write_document(snapshot, origin_ns, block, &sink);
}

void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, std::string& out) {
  write_document(snapshot, origin_ns, out, nullptr);
}

void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, BlockSink& sink) {
  std::string block;
  write_document(snapshot, origin_ns, block, &sink);
}

}  // namespace hotspan
