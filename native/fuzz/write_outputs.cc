#include "write_outputs.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "write/block_sink.h"
#include "write/chrome_json_writer.h"
#include "record/clock_readings.h"
#include "output_check.h"
#include "write/perfetto_writer.h"

namespace hotspan_fuzz {
namespace {

// Small blocks, so every event boundary of a small trace is a cut.
class StringSink : public hotspan::BlockSink {
 public:
  StringSink() : BlockSink(64) {}
  void take(const char* data, size_t n) override { out.append(data, n); }
  std::string out;
};

[[noreturn]] void finding(const char* target, const char* format, const std::string& what,
                          const std::string& doc) {
  std::fprintf(stderr, "%s: %s output does not decode: %s\n", target, format, what.c_str());
  std::fwrite(doc.data(), 1, doc.size() < 4096 ? doc.size() : 4096, stderr);
  std::fputc('\n', stderr);
  std::abort();
}

void keep(const char* target, const char* ext, const std::string& doc) {
  static std::atomic<unsigned> serial{0};
  const char* dir = std::getenv("HOTSPAN_FUZZ_OUT");
  if (dir == nullptr || *dir == '\0') return;
  const std::string path =
      std::string(dir) + "/" + target + "." + std::to_string(serial.fetch_add(1)) + ext;
  std::ofstream(path, std::ios::binary) << doc;
}

}  // namespace

void write_and_check(const hotspan::Tracer& tracer, const char* target) {
  const hotspan::FrozenSnapshot snap = tracer.freeze();
  std::string json, pb;
  StringSink json_blocks, pb_blocks;
  // One set of readings for all four, so the whole and streamed documents compare.
  const hotspan::ClockReadings clocks = hotspan::read_clocks();
  hotspan::write_chrome_json(snap, tracer.origin_ns(), clocks, json);
  hotspan::write_chrome_json(snap, tracer.origin_ns(), clocks, json_blocks);
  hotspan::write_perfetto(snap, tracer.origin_ns(), clocks, pb);
  hotspan::write_perfetto(snap, tracer.origin_ns(), clocks, pb_blocks);
  if (json_blocks.out != json) finding(target, "streamed Chrome JSON", "differs from the whole", json);
  if (pb_blocks.out != pb) finding(target, "streamed Perfetto", "differs from the whole", pb);
  std::string problem = json_problem(json);
  if (!problem.empty()) finding(target, "Chrome JSON", problem, json);
  problem = perfetto_problem(pb);
  if (!problem.empty()) finding(target, "Perfetto", problem, pb);
  keep(target, ".json", json);
  keep(target, ".pftrace", pb);
}

}  // namespace hotspan_fuzz
