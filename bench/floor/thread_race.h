// What the bare loop (floor.cc) and the C ABI case (cabi.cc) share, so their
// thread figures are taken the same way: the clocks, and a race of K threads
// that start together on one flag (thread creation is not timed).
#pragma once

#include <node_api.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <sys/resource.h>
#include <thread>
#include <vector>

namespace bench {

inline int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// CPU time of the calling thread: per-span figures use it, so a preemption on
// a shared machine does not count as span cost (wall time is kept for spans/s).
inline int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline napi_value make_double(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

// The calling thread's page faults and context switches so far (getrusage
// RUSAGE_THREAD, Linux): counts, so they do not depend on the machine's load
// the way times do. Zero where RUSAGE_THREAD is missing.
struct ThreadCounts {
  int64_t faults = 0;      // minor + major page faults
  int64_t waits = 0;       // voluntary context switches: the thread blocked (a futex, a syscall)
  int64_t preempted = 0;   // involuntary ones: another thread took its core
};
inline ThreadCounts thread_counts() {
  ThreadCounts c;
#ifdef RUSAGE_THREAD
  rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) == 0) {
    c.faults = ru.ru_minflt + ru.ru_majflt;
    c.waits = ru.ru_nvcsw;
    c.preempted = ru.ru_nivcsw;
  }
#endif
  return c;
}

struct RaceResult {
  int64_t wall_ns;        // from the flag to the last thread's end
  double cpu_ns_per_span;  // mean over threads of thread CPU time / n
  ThreadCounts counts;     // summed over the threads, over their timed part
};

// Per thread t: warm(t) untimed before the flag, then timed(t) (n spans; its
// thread CPU time is measured around it), then after(t) outside the timing.
template <class Warm, class Timed, class After>
RaceResult race_threads(int threads, uint64_t n, Warm warm, Timed timed, After after) {
  std::vector<int64_t> elapsed(threads), ends(threads);
  std::vector<ThreadCounts> counts(threads);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; t++) {
    pool.emplace_back([&, t] {
      warm(t);
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      const ThreadCounts k0 = thread_counts();
      const int64_t c0 = thread_cpu_ns();
      timed(t);
      elapsed[t] = thread_cpu_ns() - c0;
      const ThreadCounts k1 = thread_counts();
      counts[t] = ThreadCounts{k1.faults - k0.faults, k1.waits - k0.waits, k1.preempted - k0.preempted};
      ends[t] = mono_ns();
      after(t);
    });
  }
  while (ready.load() < threads) {
  }
  const int64_t t0 = mono_ns();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  RaceResult r{0, 0, {}};
  for (int t = 0; t < threads; t++) {
    if (ends[t] - t0 > r.wall_ns) r.wall_ns = ends[t] - t0;
    r.cpu_ns_per_span += static_cast<double>(elapsed[t]) / static_cast<double>(n);
    r.counts.faults += counts[t].faults;
    r.counts.waits += counts[t].waits;
    r.counts.preempted += counts[t].preempted;
  }
  r.cpu_ns_per_span /= threads;
  return r;
}

}  // namespace bench
