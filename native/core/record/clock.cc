#include "record/clock.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace hotspan::clock {

namespace detail {

int64_t now_ns_outline() { return now_ns(); }

std::atomic<int> g_source{kUnknown};

namespace {

#if defined(__x86_64__)
// Invariant TSC: CPUID 0x80000007 EDX bit 8, or the kernel's constant_tsc +
// nonstop_tsc flags (hypervisors sometimes hide the CPUID bit but the kernel
// still reports both flags when the TSC is usable as a clocksource).
bool invariant_tsc() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0x80000000u, nullptr) >= 0x80000007u &&
      __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8)) != 0) {
    return true;
  }
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 5, "flags") != 0) continue;
    std::istringstream words(line);
    bool constant = false, nonstop = false;
    std::string w;
    while (words >> w) {
      if (w == "constant_tsc") constant = true;
      if (w == "nonstop_tsc") nonstop = true;
    }
    return constant && nonstop;  // the first CPU's flags speak for all
  }
  return false;
}
#endif

int compute_source() {
#if !defined(__wasm__)  // there: no TSC and no environment
  const char* env = std::getenv("HOTSPAN_CLOCK");
  if (env != nullptr && std::strcmp(env, "monotonic") == 0) return kMonotonic;
#endif
#if defined(__x86_64__)
  if (invariant_tsc()) return kTsc;
#endif
  return kMonotonic;
}

}  // namespace

int decide_source() {
  static const int source = compute_source();  // thread-safe, once
  g_source.store(source, std::memory_order_relaxed);
  return source;
}

}  // namespace detail

namespace {
// Narrowest bracket (in ticks) seen so far; a wide one was interrupted.
std::atomic<int64_t> g_best_width{INT64_MAX};
}  // namespace

Anchor measure_anchor() {
  if (!tsc_enabled()) {
    const int64_t ns = now_ns();
    return Anchor{ns, ns};
  }
  Anchor best{0, 0};
  int64_t best_width = INT64_MAX;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int64_t before = now_ticks_ordered();
    const int64_t ns = now_ns();
    const int64_t after = now_ticks_ordered();
    const int64_t width = after - before;
    if (width < 0) continue;  // migrated between cores with skew: discard
    if (width < best_width) {
      best_width = width;
      best = Anchor{before + width / 2, ns};
    }
    int64_t seen = g_best_width.load(std::memory_order_relaxed);
    while (width < seen &&
           !g_best_width.compare_exchange_weak(seen, width, std::memory_order_relaxed)) {
    }
    // At least three tries: the first read of a cold clock (a process's first
    // anchor) can be wide, and a single preemption spoils only one.
    if (attempt >= 2 && width <= 2 * g_best_width.load(std::memory_order_relaxed)) break;
  }
  if (best_width == INT64_MAX) {  // every attempt saw ticks go backwards
    const int64_t t = now_ticks_ordered();
    best = Anchor{t, now_ns()};
  }
  return best;
}

int64_t ticks_for_ms(int64_t ms) {
  static const double ticks_per_ns = [] {
    if (!tsc_enabled()) return 1.0;
    // About 200 us of spinning, once per process, on a slow path (the first
    // ticks-mode timeline): enough for a threshold within a percent.
    const Anchor a = measure_anchor();
    Anchor b = a;
    while (b.ns - a.ns < 200000) b = measure_anchor();
    const double r = static_cast<double>(b.tick - a.tick) / static_cast<double>(b.ns - a.ns);
    return r > 0 ? r : 1.0;
  }();
  return static_cast<int64_t>(static_cast<double>(ms) * 1e6 * ticks_per_ns);
}

}  // namespace hotspan::clock
