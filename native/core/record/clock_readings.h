// Readings of the system clocks taken together at one instant: what a
// written trace needs to say which clock its timestamps are on and how that
// clock lines up with the others (Perfetto ClockSnapshot, Chrome JSON
// metadata). A parameter of the writers, so a caller without the syscall
// (the js backend) passes its own.
#pragma once

#include <cstdint>

namespace hotspan {

struct ClockReadings {
  int64_t monotonic_ns = 0;  // CLOCK_MONOTONIC: the clock of every record
  int64_t realtime_ns = 0;   // CLOCK_REALTIME: ns since the Unix epoch
  int64_t boottime_ns = -1;  // CLOCK_BOOTTIME; < 0 when the caller cannot read it
};

// BOOTTIME, REALTIME, MONOTONIC read back to back (as Perfetto's own
// CaptureClockSnapshots does); BOOTTIME -1 where the system has none.
ClockReadings read_clocks();

}  // namespace hotspan
