#include "record/clock_readings.h"

#include <ctime>

namespace hotspan {
namespace {

int64_t read_ns(clockid_t id) {
  timespec ts;
  if (clock_gettime(id, &ts) != 0) return -1;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

ClockReadings read_clocks() {
  ClockReadings r;
#ifdef CLOCK_BOOTTIME
  r.boottime_ns = read_ns(CLOCK_BOOTTIME);
#endif
  r.realtime_ns = read_ns(CLOCK_REALTIME);
  r.monotonic_ns = read_ns(CLOCK_MONOTONIC);
  return r;
}

}  // namespace hotspan
