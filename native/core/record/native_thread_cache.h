// The calling native thread's states, keyed by tracer id (ids are never
// reused, so a stale entry can never answer for another tracer). Thread exit
// runs each state's on_thread_exit(): abandon open spans, queue the rest, mark
// the timeline exited. That only touches the state and the tracer's shared
// block, both kept alive by the entry, so it is safe after the Tracer died.
#pragma once

#include <cstdint>
#include <memory>

#include "record/thread_state.h"

namespace hotspan::native_thread_cache {

// True once this thread's cache was destroyed (thread exit in progress):
// later calls, from other thread_local destructors, get no state.
bool gone();
// The cached state for the tracer, or nullptr.
std::shared_ptr<ThreadState> find(uint64_t tracer_id);
// Caches `state`; drops entries of closed tracers first.
void insert(uint64_t tracer_id, std::shared_ptr<ThreadState> state);

}  // namespace hotspan::native_thread_cache
