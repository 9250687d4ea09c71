// The stream (trace_stream.h): every record written exactly once across
// rotated files, the newest `keep` files kept, each file packet-framed from
// its first byte to its last; a write failure (/dev/full) reported once,
// the stream's cursor given up and recording going on with counts exact; a
// batch counted written only once write() has taken it (a FIFO not read yet).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "record/chunk_pool.h"
#include "write/perfetto_writer.h"
#include "record/thread_state.h"
#include "write/trace_stream.h"
#include "record/tracer.h"

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

// A file that takes nothing yet (a FIFO whose reader has not read): what the
// stream handed to it is not counted written until write() has taken it,
// whatever the stream's thread has formatted meanwhile, and its chunks stay
// pinned: none is released while the budget fills. Once read, the file
// holds every span the stream read.
static void written_means_taken_by_write() {
  const std::string dir = tmpdir();
  const std::string fifo = dir + "/pipe.pftrace";
  CHECK_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so the stream's open does not block
  CHECK(rd >= 0);
  TracerOptions o;
  o.memory_limit = 4 << 20;  // about 150 chunks: the first spans take two thirds
  o.on_full = FullPolicy::kOverwrite;
  auto t = Tracer::create(o);
  const uint32_t name = t->intern("span");
  auto main = t->attach_js_thread("main");
  constexpr uint64_t kSpans = 100000;  // about 4.6 MB: several 1 MiB blocks, two batches
  for (uint64_t i = 0; i < kSpans; ++i) {
    CHECK_EQ(begin(*main, name, static_cast<int64_t>(2 * i)), Status::kOk);
    CHECK_EQ(end(*main, static_cast<int64_t>(2 * i + 1)), Status::kOk);
  }
  StreamOptions so;
  so.path = fifo;
  so.interval_ms = 1;
  StreamStatus err;
  auto s = TraceStream::start(t, so, nullptr, &err);
  CHECK(s != nullptr);
  if (!s) return;
  // The pipe full to its last page (generous deadline): the file's writer is
  // blocked in a write() that the pipe took only part of.
  const int pipe_bytes = ::fcntl(rd, F_GETPIPE_SZ);
  const int page = static_cast<int>(::sysconf(_SC_PAGESIZE));
  int queued = 0;
  for (int i = 0; i < 20000 && queued < pipe_bytes - page; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK_EQ(::ioctl(rd, FIONREAD, &queued), 0);
  }
  CHECK(queued >= pipe_bytes - page);
  // Time for the stream's thread to format and hand over what it can.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const StreamStatus blocked = s->status();
  // Counted written: only batches whose last byte write() took, so at most
  // what the pipe holds (a 64 KiB pipe holds less than a batch, not 100,000 spans).
  CHECK(blocked.bytes <= static_cast<uint64_t>(queued));
  CHECK(blocked.written < kSpans / 10);
  CHECK_EQ(blocked.error, 0);
  // Twice the budget more while the file takes nothing.
  constexpr uint64_t kMore = 300000;
  for (uint64_t i = kSpans; i < kSpans + kMore; ++i) {
    CHECK_EQ(begin(*main, name, static_cast<int64_t>(2 * i)), Status::kOk);
    CHECK_EQ(end(*main, static_cast<int64_t>(2 * i + 1)), Status::kOk);
  }
  RecordCounts during;
  for (const TimelineCounts& c : t->counts()) during += c.counts;
  // The budget full and its oldest chunks pinned (one timeline recycles
  // from its front only): new spans are dropped and counted, and no chunk
  // of a batch the file has not taken is released.
  CHECK(during.dropped > 0);
  CHECK(during.released <= s->status().written);
  CHECK(s->status().written < kSpans / 10);
  // Read everything while close() finishes the file.
  std::thread closer([&] { s->close(); });
  CHECK_EQ(::fcntl(rd, F_SETFL, 0), 0);
  std::string bytes;
  char buf[1 << 16];
  for (ssize_t n; (n = ::read(rd, buf, sizeof buf)) > 0;) bytes.append(buf, static_cast<size_t>(n));
  closer.join();
  ::close(rd);
  const StreamStatus st = s->status();
  CHECK_EQ(st.error, 0);
  // The first spans were pinned, so none of them was missed.
  CHECK(st.written >= kSpans);
  RecordCounts after;
  for (const TimelineCounts& c : t->counts()) after += c.counts;
  CHECK_EQ(after.produced, kSpans + kMore);
  CHECK_EQ(st.written + st.missed, after.produced - after.dropped);
  CHECK_EQ(st.bytes, static_cast<uint64_t>(bytes.size()));
  CHECK(packets(bytes) > 0);
  CHECK_EQ(begins(bytes), static_cast<size_t>(st.written));
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
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
  written_means_taken_by_write();
  return check::result("trace_stream_test");
}
