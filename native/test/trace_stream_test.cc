// The stream (trace_stream.h): every record written exactly once across
// rotated files, the newest `keep` files kept, each file packet-framed from
// its first byte to its last; a write failure (/dev/full) reported once,
// the stream's cursor given up and recording going on with counts exact.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "chunk_pool.h"
#include "perfetto_writer.h"
#include "thread_state.h"
#include "trace_stream.h"
#include "tracer.h"

using namespace hotspan;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

uint64_t read_varint(const std::string& s, size_t& i) {
  uint64_t v = 0;
  for (int shift = 0; i < s.size(); shift += 7) {
    const auto b = static_cast<uint8_t>(s[i++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  return UINT64_MAX;
}

// Whole Trace.packet fields from start to end; returns how many, or -1.
long packets(const std::string& s) {
  size_t i = 0;
  long n = 0;
  while (i < s.size()) {
    if (static_cast<uint8_t>(s[i++]) != 0x0A) return -1;
    const uint64_t len = read_varint(s, i);
    if (len == UINT64_MAX || i + len > s.size()) return -1;
    i += len;
    ++n;
  }
  return n;
}

// TYPE_SLICE_BEGIN events: the bytes 0x48 0x01 (TrackEvent.type = 1) occur
// once per begin in this writer's packets (checked against protoc in
// test/stream.test.ts); a count per file.
size_t begins(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i + 3 < s.size(); ++i) {
    // A begin packet's event starts: kTrackEvent, len, kEventType, 1.
    if (static_cast<uint8_t>(s[i]) == 0x5A && static_cast<uint8_t>(s[i + 2]) == 0x48 && s[i + 3] == 1) ++n;
  }
  return n;
}

std::string tmpdir() {
  char tmpl[] = "/tmp/hotspan-stream-XXXXXX";
  return ::mkdtemp(tmpl);
}

}  // namespace

static void rotates_and_keeps_the_newest() {
  TracerOptions o;
  auto t = Tracer::create(o);
  const uint32_t name = t->intern("span");
  const std::string dir = tmpdir();
  StreamOptions so;
  so.path = dir + "/trace.pftrace";
  so.rotate_bytes = 64 << 10;
  so.keep = 3;
  so.interval_ms = 5;
  StreamStatus err;
  auto s = TraceStream::start(t, so, nullptr, &err);
  CHECK(s != nullptr);
  constexpr uint64_t kSpans = 200000;
  std::thread w([&] {
    auto st = t->native_thread();
    for (uint64_t i = 0; i < kSpans; ++i) {
      CHECK_EQ(begin(*st, name, static_cast<int64_t>(2 * i)), Status::kOk);
      CHECK_EQ(end(*st, static_cast<int64_t>(2 * i + 1)), Status::kOk);
    }
    publish(*st);
  });
  w.join();
  s->close();
  const StreamStatus st = s->status();
  CHECK_EQ(st.error, 0);
  CHECK(st.closed);
  CHECK_EQ(st.written, kSpans);
  CHECK_EQ(st.missed, uint64_t{0});
  CHECK(st.files > 3);
  // The newest three files exist, each whole; the older ones are gone.
  size_t in_kept = 0;
  for (uint64_t n = 1; n <= st.files; ++n) {
    const std::string f = TraceStream::numbered(so.path, n);
    if (n + 3 <= st.files) {
      CHECK(!exists(f));
      continue;
    }
    const std::string bytes = slurp(f);
    CHECK(packets(bytes) > 0);
    // A finished file passes rotate_bytes by at most one 64-record batch
    // (about 3 KiB here) and its counts packet.
    if (n < st.files) CHECK(bytes.size() <= so.rotate_bytes + (8 << 10));
    // Every file starts with the sequence's cleared state and ends with the counts.
    CHECK(bytes.find("hotspan.counts") != std::string::npos);
    in_kept += begins(bytes);
    ::unlink(f.c_str());
  }
  CHECK(in_kept > 0 && in_kept < kSpans);
  ::rmdir(dir.c_str());
}

static void one_file_holds_every_span() {
  auto t = Tracer::create(TracerOptions{});
  const uint32_t name = t->intern("span");
  auto main = t->attach_js_thread("main");
  const std::string dir = tmpdir();
  StreamOptions so;
  so.path = dir + "/one.pftrace";
  StreamStatus err;
  auto s = TraceStream::start(t, so, nullptr, &err);
  CHECK(s != nullptr);
  for (int64_t i = 0; i < 5000; ++i) {
    CHECK_EQ(begin(*main, name, 2 * i), Status::kOk);
    CHECK_EQ(end(*main, 2 * i + 1), Status::kOk);
  }
  s->close();
  s->close();  // idempotent
  const std::string bytes = slurp(so.path);
  CHECK(packets(bytes) > 0);
  CHECK_EQ(begins(bytes), size_t{5000});
  CHECK_EQ(s->status().written, uint64_t{5000});
  ::unlink(so.path.c_str());
  ::rmdir(dir.c_str());
}

static void open_failure_is_reported() {
  auto t = Tracer::create(TracerOptions{});
  StreamOptions so;
  so.path = "/nonexistent-dir-hotspan/x.pftrace";
  StreamStatus err;
  CHECK(TraceStream::start(t, so, nullptr, &err) == nullptr);
  CHECK_EQ(err.error_op, std::string("open"));
  CHECK(err.error != 0);
  // Its cursor slot went back: another stream may open.
  so.path = "/dev/null";
  CHECK(TraceStream::start(t, so, nullptr, &err) != nullptr);
}

// /dev/full: every write fails (ENOSPC). The error comes once, the stream
// gives up its cursor, and the tracer records on under its budget.
static void write_failure_keeps_recording() {
  TracerOptions o;
  o.memory_limit = ChunkPool::kMinLimit;
  o.on_full = FullPolicy::kDrop;
  auto t = Tracer::create(o);
  const uint32_t name = t->intern("span");
  auto main = t->attach_js_thread("main");
  StreamOptions so;
  so.path = "/dev/full";
  so.interval_ms = 1;
  std::atomic<int> errors{0};
  StreamStatus err;
  auto s = TraceStream::start(t, so, [&] { errors.fetch_add(1); }, &err);
  CHECK(s != nullptr);
  const uint64_t total = 3 * (ChunkPool::kMinLimit / ChunkPool::kChunkBytes) * kChunkRecords;
  for (uint64_t i = 0; i < total; ++i) {
    CHECK_EQ(begin(*main, name, static_cast<int64_t>(2 * i)), Status::kOk);
    CHECK_EQ(end(*main, static_cast<int64_t>(2 * i + 1)), Status::kOk);
    if (i == 1000) {
      s->wake();
      while (s->status().error == 0) std::this_thread::yield();
    }
  }
  s->close();
  const StreamStatus st = s->status();
  CHECK_EQ(st.error, ENOSPC);
  CHECK_EQ(st.error_op, std::string("write"));
  CHECK_EQ(errors.load(), 1);
  CHECK(st.unwritten > 0);
  RecordCounts sum;
  for (const TimelineCounts& c : t->counts()) sum += c.counts;
  CHECK_EQ(sum.produced, total);
  CHECK_EQ(sum.produced, sum.kept + sum.released + sum.overwritten + sum.dropped);
  // Nothing unwritten was called released, and the budget held.
  CHECK_EQ(sum.released, uint64_t{0});
  CHECK(sum.dropped > 0);
  CHECK(t->memory_used() <= t->memory_limit());
}

static void numbered_names() {
  CHECK_EQ(TraceStream::numbered("a/b/t.pftrace", 3), std::string("a/b/t-3.pftrace"));
  CHECK_EQ(TraceStream::numbered("a.b/t", 2), std::string("a.b/t-2"));
  CHECK_EQ(TraceStream::numbered("a/.hidden", 1), std::string("a/.hidden-1"));
}

int main() {
  numbered_names();
  one_file_holds_every_span();
  rotates_and_keeps_the_newest();
  open_failure_is_reported();
  write_failure_keeps_recording();
  return check::result("trace_stream_test");
}
