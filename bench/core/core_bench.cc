// The holder check's table, measured on the core itself (no Node, no JS), so
// each path is seen without the Node-API entry around it:
//   core_bench [spans]  -> one JSON line
// Rows (ns per record, median of 3 repetitions in this process):
//   bare        two clock reads + a 28-byte store (the floor of this binary)
//   finalize    holder thread: fast::begin/end, end() commits at once
//   enqueue     the same thread through a native (non-holder) state of the
//               tracer: records queue in batches of PendingQueue::kBatch
//   drain       Tracer::flush() of what `enqueue` queued, per record
//   native      a std::thread through the C ABI table (thread_local lookup,
//               begin/end, batched enqueue), as another addon records
//   native_drain flush() of the native thread's records, per record
//   check       the hot-path holder decision alone (ThreadState::finalizes_now
//               with an empty queue: two relaxed loads), per call
//   check_tracer the tracer-wide lookup (holder_check::holder_for(tracer id),
//               used by async_end / group_end), per call
// and "writer": freeze() plus every record read and converted (what
// tracer.snapshot() does before it fills its JS arrays), Chrome JSON writer (into a std::string) and Perfetto writer (streamed,
// counted, from freeze(): what write() does), no Node, no file: spans/s over n/2
// spans.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "record/c_api.h"
#include "record/clock.h"
#include "record/clock_readings.h"
#include "write/block_sink.h"
#include "write/chrome_json_writer.h"
#include "record/holder_check.h"
#include "write/perfetto_writer.h"
#include "record/thread_state.h"
#include "record/tracer.h"

using hotspan::clock::now_ns;  // the span clock

// The timer: CPU time of the calling thread, so a preemption on a shared
// machine is not counted as cost.
static inline int64_t cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {

// Keeps a value alive without a store the compiler could drop.
template <typename T>
inline void keep(T const& v) {
  asm volatile("" : : "r,m"(v) : "memory");
}

// hotspan's stored record layout (28 bytes, the end as a 32-bit duration).
struct __attribute__((packed, aligned(4))) Rec {
  int64_t start;
  uint32_t duration, a, b, name, flags;
};

double bare(uint64_t n) {
  std::vector<Rec> ring(1 << 16);
  int64_t t0 = cpu_ns();
  for (uint64_t i = 0; i < n; i++) {
    Rec& r = ring[i & 0xFFFF];
    r.start = now_ns();
    r.name = static_cast<uint32_t>(i);
    r.duration = static_cast<uint32_t>(now_ns() - r.start);
  }
  int64_t dt = cpu_ns() - t0;
  keep(ring[n & 0xFFFF]);
  return static_cast<double>(dt) / n;
}

struct PathResult {
  double record_ns = 0;
  double drain_ns = 0;
};

// Holder JS thread, or (enqueue) the same thread through a native state:
// the non-holder path.
PathResult js_path(uint64_t n, bool enqueue) {
  auto tracer = hotspan::Tracer::create();
  const uint32_t name = tracer->intern("core.bench");
  auto holder = tracer->attach_js_thread("main");
  auto state = enqueue ? tracer->native_thread() : holder;
  int64_t t0 = cpu_ns();
  for (uint64_t i = 0; i < n; i++) {
    hotspan::fast::begin(*state, name, now_ns());
    hotspan::fast::end(*state, now_ns());
  }
  int64_t t1 = cpu_ns();
  if (enqueue) hotspan::publish(*state);
  tracer->flush();
  int64_t t2 = cpu_ns();
  PathResult r;
  r.record_ns = static_cast<double>(t1 - t0) / n;
  r.drain_ns = static_cast<double>(t2 - t1) / n;
  tracer->detach_thread(*holder, now_ns());
  tracer->close();  // releases the native state this thread caches
  return r;
}

PathResult native_path(uint64_t n) {
  auto tracer = hotspan::Tracer::create();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  uint32_t name = 0;
  api->intern(api->tracer, "core.native", 11, &name);
  int64_t dt = 0;
  std::thread th([&] {
    api->begin(api->tracer, name);  // first call creates the timeline: untimed
    api->end(api->tracer);
    int64_t t0 = cpu_ns();
    for (uint64_t i = 0; i < n; i++) {
      api->begin(api->tracer, name);
      api->end(api->tracer);
    }
    dt = cpu_ns() - t0;
    api->flush_thread(api->tracer);
  });
  th.join();
  int64_t t1 = cpu_ns();
  tracer->flush();
  int64_t t2 = cpu_ns();
  PathResult r;
  r.record_ns = static_cast<double>(dt) / n;
  r.drain_ns = static_cast<double>(t2 - t1) / (n + 1);
  return r;
}

double check_state(uint64_t n) {
  auto tracer = hotspan::Tracer::create();
  auto state = tracer->attach_js_thread("main");
  uint64_t yes = 0;
  int64_t t0 = cpu_ns();
  for (uint64_t i = 0; i < n; i++) {
    keep(state);  // forces a reload: the check is not hoisted out of the loop
    yes += state->finalizes_now();
  }
  int64_t dt = cpu_ns() - t0;
  keep(yes);
  tracer->detach_thread(*state, now_ns());
  return static_cast<double>(dt) / n;
}

double check_tracer(uint64_t n) {
  auto tracer = hotspan::Tracer::create();
  auto state = tracer->attach_js_thread("main");
  const uint64_t id = tracer->id();
  uint64_t yes = 0;
  int64_t t0 = cpu_ns();
  for (uint64_t i = 0; i < n; i++) yes += hotspan::holder_check::holder_for(id) != nullptr;
  int64_t dt = cpu_ns() - t0;
  keep(yes);
  tracer->detach_thread(*state, now_ns());
  return static_cast<double>(dt) / n;
}

// The writers on the core alone (no Node, no file), over spans recorded in
// the addon's time unit (TSC ticks where invariant): freeze() and a read of
// every record (the conversion snapshot() does),
// Chrome JSON into a std::string, and freeze() plus Perfetto streamed to a
// sink that only counts. spans/s from the median of 3 timed repetitions after a warm-up.
struct WriterResult {
  double snapshot_spans_per_sec = 0;
  double chrome_json_spans_per_sec = 0;
  double chrome_json_bytes_per_span = 0;
  double perfetto_spans_per_sec = 0;
};

double med3(double a, double b, double c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }

template <typename F>
double median3(F f) {
  double a = f(), b = f(), c = f();
  return med3(a, b, c);
}

template <typename F>
double median_of_3_after_warmup(F f) {
  f();
  return median3(f);
}

WriterResult writers(uint64_t n) {
  hotspan::TracerOptions options;
  options.origin_ns = now_ns();
  const bool ticks = hotspan::clock::tsc_enabled();
  if (ticks) options.time_unit = hotspan::TimeUnit::kTicks;
  auto tracer = hotspan::Tracer::create(options);
  auto clock = [ticks] { return ticks ? hotspan::clock::now_ticks() : now_ns(); };
  const uint32_t parent = tracer->intern("request");
  const uint32_t child = tracer->intern("db.query");
  auto state = tracer->attach_js_thread("main");
  const uint64_t groups = n / 4;
  for (uint64_t g = 0; g < groups; g++) {
    hotspan::fast::begin(*state, parent, clock());
    for (int c = 0; c < 3; c++) {
      hotspan::fast::begin(*state, child, clock());
      hotspan::fast::end(*state, clock());
    }
    hotspan::fast::end(*state, clock());
  }
  tracer->flush();
  const double spans = static_cast<double>(groups * 4);
  struct Count : hotspan::BlockSink {
    Count() : BlockSink(1 << 20) {}
    void take(const char*, size_t n) override { bytes += n; }
    size_t bytes = 0;
  };
  size_t json_bytes = 0;
  WriterResult w;
  w.snapshot_spans_per_sec = spans * 1e9 / median_of_3_after_warmup([&] {
    const int64_t t0 = cpu_ns();
    const hotspan::FrozenSnapshot s = tracer->freeze();
    int64_t sum = 0;
    for (const auto& tl : s.timelines) {
      for (const hotspan::SpanRecord r : tl.records) sum += r.end_ns - r.start_ns;
    }
    const int64_t dt = cpu_ns() - t0;
    keep(sum);
    return static_cast<double>(dt);
  });
  w.chrome_json_spans_per_sec = spans * 1e9 / median_of_3_after_warmup([&] {
    std::string out;
    const int64_t t0 = cpu_ns();
    hotspan::write_chrome_json(*tracer, out);
    const int64_t dt = cpu_ns() - t0;
    json_bytes = out.size();
    return static_cast<double>(dt);
  });
  w.chrome_json_bytes_per_span = static_cast<double>(json_bytes) / spans;
  w.perfetto_spans_per_sec = spans * 1e9 / median_of_3_after_warmup([&] {
    Count sink;
    const int64_t t0 = cpu_ns();
    hotspan::write_perfetto(tracer->freeze(), tracer->origin_ns(), hotspan::read_clocks(), sink);
    const int64_t dt = cpu_ns() - t0;
    keep(sink.bytes);
    return static_cast<double>(dt);
  });
  tracer->detach_thread(*state, now_ns());
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  if (n < 1000) n = 1000;
  // Warm-up: page in, let the core's frequency settle.
  bare(n / 4);
  js_path(n / 4, false);

  const double b = median3([&] { return bare(n); });
  PathResult fin[3], enq[3], nat[3];
  for (int i = 0; i < 3; i++) {
    fin[i] = js_path(n, false);
    enq[i] = js_path(n, true);
    nat[i] = native_path(n);
  }
  auto m = [](PathResult* p, bool drain) {
    return drain ? med3(p[0].drain_ns, p[1].drain_ns, p[2].drain_ns)
                 : med3(p[0].record_ns, p[1].record_ns, p[2].record_ns);
  };
  const double cs = median3([&] { return check_state(n * 4); });
  const double ct = median3([&] { return check_tracer(n); });
  const WriterResult w = writers(n / 2);

  std::printf(
      "{\"spans\":%llu,\"rows\":{"
      "\"bare\":{\"label\":\"bare loop: 2 clock reads + store (this binary)\",\"ns\":%.3f},"
      "\"finalize\":{\"label\":\"holder: begin+end, immediate finalize\",\"ns\":%.3f},"
      "\"enqueue\":{\"label\":\"non-holder state on the same thread: begin+end, enqueue\",\"ns\":%.3f},"
      "\"drain\":{\"label\":\"flush() of the enqueued records (drain)\",\"ns\":%.3f},"
      "\"native\":{\"label\":\"native thread via C ABI: begin+end, enqueue\",\"ns\":%.3f},"
      "\"native_drain\":{\"label\":\"flush() of the native thread's records\",\"ns\":%.3f},"
      "\"check\":{\"label\":\"hot-path holder decision alone (finalizes_now)\",\"ns\":%.3f},"
      "\"check_tracer\":{\"label\":\"tracer-wide holder lookup (thread attachments)\",\"ns\":%.3f},"
      "\"finalize_over_bare\":{\"label\":\"finalize path above the bare loop\",\"ns\":%.3f},"
      "\"enqueue_minus_finalize\":{\"label\":\"enqueue path minus finalize path\",\"ns\":%.3f}"
      "},\"missing\":[\"the hot path cannot be built without its holder check, so the check's "
      "cost inside end() is bounded by the 'check' row, not measured in place\"],"
      "\"writer\":{\"chromeJsonSpansPerSec\":%.0f,\"chromeJsonBytesPerSpan\":%.2f,"
      "\"snapshotSpansPerSec\":%.0f,\"perfettoSpansPerSec\":%.0f,\"perfettoInput\":\"freeze\","
      "\"spans\":%llu}}\n",
      static_cast<unsigned long long>(n), b, m(fin, false), m(enq, false), m(enq, true), m(nat, false),
      m(nat, true), cs, ct, m(fin, false) - b, m(enq, false) - m(fin, false), w.chrome_json_spans_per_sec,
      w.chrome_json_bytes_per_span, w.snapshot_spans_per_sec, w.perfetto_spans_per_sec,
      static_cast<unsigned long long>((n / 2 / 4) * 4));
  return 0;
}
