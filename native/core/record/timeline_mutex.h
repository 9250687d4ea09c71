// The mutex that guards a timeline's cross-thread state (chunk list, side
// tables, name, exited flag). HOTSPAN_TEST_NO_TIMELINE_LOCK turns it into a
// no-op: only native/test/run.sh defines it, to show that the stress test
// catches a missing lock (the negative control). Never define it elsewhere.
#pragma once

#include "record/platform_lock.h"

namespace hotspan {

#ifdef HOTSPAN_TEST_NO_TIMELINE_LOCK
struct TimelineMutex {
  void lock() {}
  void unlock() {}
};
#else
using TimelineMutex = Mutex;
#endif

}  // namespace hotspan
