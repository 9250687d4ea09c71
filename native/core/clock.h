// The one clock every thread reads: CLOCK_MONOTONIC, the clock behind libuv's
// uv_hrtime() and so behind performance.now(). The tracer converts to the
// performance.now() axis with its origin_ns at output time.
#pragma once

#include <cstdint>
#include <ctime>

namespace hotspan::clock {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline double to_ms(int64_t ns, int64_t origin_ns) {
  return static_cast<double>(ns - origin_ns) / 1e6;
}

}  // namespace hotspan::clock
