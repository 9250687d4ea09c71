// The one clock every thread reads: CLOCK_MONOTONIC, the clock behind libuv's
// uv_hrtime() and so behind performance.now(). The tracer converts to the
// performance.now() axis with its origin_ns at output time.
//
// Record timestamps may instead be raw ticks (now_ticks): the invariant TSC on
// x86_64, read with one rdtsc (cheaper than clock_gettime's vDSO path; the
// bench's floor and floor-tsc cases compare the two).
// Timelines keep (tick, ns) anchors and convert ticks to CLOCK_MONOTONIC ns
// when records are read (tick_anchors.h). Without an invariant TSC, or with
// HOTSPAN_CLOCK=monotonic, now_ticks() is now_ns() and conversion is the
// identity. now_ns() stays the clock for everything that is not a record
// timestamp (calibration with JS, the C ABI's now_ns/now_ms).
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace hotspan::clock {

#if defined(__wasm__)
// The WebAssembly build has no clock of its own: the host gives its
// CLOCK_MONOTONIC ns (process.hrtime.bigint() in Node, the same clock).
extern "C" __attribute__((import_module("hotspan"), import_name("now_ns"))) int64_t
hotspan_host_now_ns();
inline int64_t now_ns() { return hotspan_host_now_ns(); }
#else
inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
#endif

inline double to_ms(int64_t ns, int64_t origin_ns) {
  return static_cast<double>(ns - origin_ns) / 1e6;
}

namespace detail {
// now_ns() out of line: the hot path's fallback when there is no TSC, kept
// out of the callers so they need no stack frame for its timespec.
__attribute__((noinline)) int64_t now_ns_outline();
enum : int { kUnknown = 0, kTsc = 1, kMonotonic = 2 };
// Decided once (clock.cc): kTsc or kMonotonic. Relaxed loads suffice: every
// thread computes the same answer.
extern std::atomic<int> g_source;
int decide_source();
}  // namespace detail

// True when now_ticks() reads the TSC (decided once per process).
inline bool tsc_enabled() {
  int s = detail::g_source.load(std::memory_order_relaxed);
  if (s == detail::kUnknown) s = detail::decide_source();
  return s == detail::kTsc;
}

// The hot-path timestamp: raw TSC ticks when tsc_enabled(), else CLOCK_MONOTONIC ns.
inline int64_t now_ticks() {
#if defined(__x86_64__)
  if (__builtin_expect(detail::g_source.load(std::memory_order_relaxed) == detail::kTsc, 1)) {
    return static_cast<int64_t>(__rdtsc());
  }
  if (tsc_enabled()) return static_cast<int64_t>(__rdtsc());
#endif
  return detail::now_ns_outline();
}

// A tick read that is not executed before earlier loads (lfence first): for
// anchors, which must not be taken "before" records a reader already saw.
inline int64_t now_ticks_ordered() {
#if defined(__x86_64__)
  if (tsc_enabled()) {
    _mm_lfence();
    const auto t = static_cast<int64_t>(__rdtsc());
    _mm_lfence();
    return t;
  }
#endif
  return now_ns();
}

// One (tick, CLOCK_MONOTONIC ns) pair: tick-before / clock_gettime /
// tick-after, midpoint tick; retried while the bracket is wider than twice
// the narrowest seen in this process (a preemption or a slow vDSO read).
struct Anchor {
  int64_t tick;
  int64_t ns;
};
Anchor measure_anchor();

// About `ms` milliseconds in ticks (a threshold, not a conversion: from a
// short calibration made once per process). ms * 1e6 without the TSC.
int64_t ticks_for_ms(int64_t ms);

}  // namespace hotspan::clock
