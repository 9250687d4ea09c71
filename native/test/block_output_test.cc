// Streamed output: each writer hands a sink the same bytes it builds whole,
// in blocks cut at event boundaries; FileBlockWriter writes them to a file
// from its own thread and reports the first failing step with its errno.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "check.h"
#include "write/chrome_json_writer.h"
#include "write/file_block_writer.h"
#include "write/perfetto_writer.h"
#include "snapshot_builders.h"

namespace {

using hotspan::BlockSink;
using hotspan::FileBlockWriter;
using hotspan::Snapshot;
using hotspan::TimelineKind;
using hotspan_test::rec;
using hotspan_test::timeline;

constexpr int64_t kOrigin = 1'000'000'000;

// Nested spans on two threads, attributes on some, and a concurrent track
// with overlapping spans (Perfetto lays those out on lanes).
Snapshot sample(uint32_t pairs) {
  Snapshot s;
  s.names = {"request", "db.query", "cache \"get\""};
  for (uint32_t t = 1; t <= 2; ++t) {
    auto tl = timeline(t, "thread " + std::to_string(t), TimelineKind::kJs);
    int64_t now = kOrigin + 500;
    for (uint32_t i = 0; i < pairs; ++i) {
      const uint32_t parent = 2 * i + 1;
      tl.records.push_back(rec(parent + 1, parent, 1, now + 10, now + 90, 1));  // child ends first
      tl.records.push_back(rec(parent, 0, 0, now, now + 100, 0));
      if (i % 7 == 0) tl.attrs.emplace_back(parent, "{\"route\":\"/users/" + std::to_string(i) + "\"}");
      now += 150;
    }
    s.timelines.push_back(std::move(tl));
  }
  auto track = timeline(3, "track: io", TimelineKind::kTrack);
  for (uint32_t i = 0; i < pairs; ++i) {
    const int64_t start = kOrigin + 1000 + 40 * i;
    track.records.push_back(rec(i + 1, 0, 2, start, start + 100 + (i % 5) * 30));
  }
  s.timelines.push_back(std::move(track));
  return s;
}

template <typename WriteWhole, typename WriteStream>
void streams_same_bytes(const char* what, WriteWhole whole, WriteStream stream) {
  const Snapshot s = sample(3000);
  std::string expected;
  whole(s, expected);
  hotspan_test::Collect sink(4096);
  stream(s, sink);
  CHECK(sink.blocks.size() > 10);
  for (size_t i = 0; i + 1 < sink.blocks.size(); ++i) CHECK(sink.blocks[i].size() >= 4096);
  CHECK(sink.blocks.back().size() > 0);
  CHECK(sink.joined() == expected);
  std::printf("%s: %zu bytes in %zu blocks\n", what, expected.size(), sink.blocks.size());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Both writers through the file writer, which trades buffers with them
// (take_block) rather than copying: the file must hold exactly the whole
// document, whatever the reused buffers held before.
void file_writer_writes_the_stream() {
  const Snapshot s = sample(20000);
  for (const bool perfetto : {false, true}) {
    std::string expected;
    if (perfetto) {
      hotspan::write_perfetto(s, kOrigin, hotspan_test::kTestClocks, expected);
    } else {
      hotspan::write_chrome_json(s, kOrigin, hotspan_test::kTestClocks, expected);
    }
    char path[] = "/tmp/hotspan-block-XXXXXX";
    const int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    {
      // Small blocks: the formatter waits on the writer thread many times.
      FileBlockWriter w(path, 1024);
      if (perfetto) {
        hotspan::write_perfetto(s, kOrigin, hotspan_test::kTestClocks, w);
      } else {
        hotspan::write_chrome_json(s, kOrigin, hotspan_test::kTestClocks, w);
      }
      const char* op = nullptr;
      CHECK_EQ(w.finish(&op), 0);
      CHECK(op == nullptr);
    }
    CHECK(read_file(path) == expected);
    unlink(path);
  }
}

void file_writer_reports_errors() {
  const Snapshot s = sample(100);
  {
    FileBlockWriter w("/nonexistent-dir-hotspan/trace.json");
    hotspan::write_chrome_json(s, kOrigin, hotspan_test::kTestClocks, w);
    const char* op = nullptr;
    CHECK_EQ(w.finish(&op), ENOENT);
    CHECK(op != nullptr && std::strcmp(op, "open") == 0);
  }
  if (access("/dev/full", W_OK) == 0) {
    FileBlockWriter w("/dev/full", 1024);
    hotspan::write_perfetto(s, kOrigin, hotspan_test::kTestClocks, w);
    const char* op = nullptr;
    CHECK_EQ(w.finish(&op), ENOSPC);
    CHECK(op != nullptr && std::strcmp(op, "write") == 0);
  }
}

}  // namespace

int main() {
  streams_same_bytes(
      "chrome json",
      [](const Snapshot& s, std::string& out) { hotspan::write_chrome_json(s, kOrigin, hotspan_test::kTestClocks, out); },
      [](const Snapshot& s, BlockSink& sink) { hotspan::write_chrome_json(s, kOrigin, hotspan_test::kTestClocks, sink); });
  streams_same_bytes(
      "perfetto",
      [](const Snapshot& s, std::string& out) { hotspan::write_perfetto(s, kOrigin, hotspan_test::kTestClocks, out); },
      [](const Snapshot& s, BlockSink& sink) { hotspan::write_perfetto(s, kOrigin, hotspan_test::kTestClocks, sink); });
  file_writer_writes_the_stream();
  file_writer_reports_errors();
  return check::result("block_output_test");
}
