// The stream writer's drain, core only (what bench/cases/stream.mjs times
// through the addon): SPANS spans recorded as requests of 3 children on one
// JS thread timeline (ticks, as the addon records), then a TraceStream opened
// on them and closed, which writes every record into PATH. Prints the wall
// time, spans/s, and the process's user and system CPU over the drain (the
// main thread only waits in close() meanwhile). For callgrind, only the
// stream's two threads (the formatter, the file's writer) are collected:
//   g++ -O2 -std=c++17 -Inative/core -Inative/include bench/core/stream_drain.cc \
//     native/build/libhotspan_core.a -lpthread -o /tmp/stream_drain
//   /tmp/stream_drain SPANS PATH [REPS]
//   valgrind --tool=callgrind --collect-atstart=no \
//     --toggle-collect='hotspan::TraceStream::run*' --toggle-collect='hotspan::FileBlockWriter::run*' \
//     /tmp/stream_drain SPANS /dev/null
// then instructions per span = the total Ir / SPANS / REPS. PATH /dev/null
// leaves the file system out.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "record/clock.h"
#include "record/thread_state.h"
#include "write/trace_stream.h"
#include "record/tracer.h"

using namespace hotspan;

static double cpu_s(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; }

static StreamStatus timed_drain(const std::shared_ptr<Tracer>& t, const std::string& path) {
  StreamOptions o;
  o.path = path;
  StreamStatus err;
  std::unique_ptr<TraceStream> s = TraceStream::start(t, o, nullptr, &err);
  if (!s) return err;
  s->close();
  return s->status();
}

int main(int argc, char** argv) {
  const long spans = argc > 1 ? std::atol(argv[1]) : 4000000;
  const std::string path = argc > 2 ? argv[2] : "/tmp/stream_drain.pftrace";
  const long reps = argc > 3 ? std::atol(argv[3]) : 1;
  for (long rep = 0; rep < reps; ++rep) {
    TracerOptions o;
    o.origin_ns = clock::now_ns();
    o.time_unit = TimeUnit::kTicks;
    o.memory_limit = static_cast<size_t>(spans) * 40 + (64u << 20);
    std::shared_ptr<Tracer> t = Tracer::create(o);
    const uint32_t request = t->intern("request");
    const uint32_t query = t->intern("db.query");
    auto st = t->attach_js_thread("main");
    for (long g = 0; g < spans / 4; ++g) {
      fast::begin(*st, request, clock::now_ticks());
      for (int c = 0; c < 3; ++c) {
        fast::begin(*st, query, clock::now_ticks());
        fast::end(*st, clock::now_ticks());
      }
      fast::end(*st, clock::now_ticks());
    }
    rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    const auto t0 = std::chrono::steady_clock::now();
    const StreamStatus status = timed_drain(t, path);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    getrusage(RUSAGE_SELF, &r1);
    if (status.error != 0 || status.written != static_cast<uint64_t>(spans / 4 * 4)) {
      std::fprintf(stderr, "stream: error %d (%s) written %llu\n", status.error, status.error_op.c_str(),
                   static_cast<unsigned long long>(status.written));
      return 1;
    }
    std::printf("spans %llu ms %.1f spans/s %.2fM user %.1f ms sys %.1f ms bytes/span %.2f\n",
                static_cast<unsigned long long>(status.written), s * 1e3, status.written / s / 1e6,
                (cpu_s(r1.ru_utime) - cpu_s(r0.ru_utime)) * 1e3, (cpu_s(r1.ru_stime) - cpu_s(r0.ru_stime)) * 1e3,
                static_cast<double>(status.bytes) / status.written);
    t->detach_thread(*st, t->now());
  }
  return 0;
}
