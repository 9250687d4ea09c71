// The holder check: may this thread finalize records of this tracer now?
// Yes iff the thread was attached as a JS thread of THIS tracer
// (attach_js_thread) and its finalization is not paused (finalizer / GC
// callback). The hot path reads the state's own commit_now flag (a state is
// only used by its own thread, so that is the same question); tracer-wide
// calls from an arbitrary thread (async_end, group_end) use this thread's
// list of attachments.
#pragma once

#include <cstdint>
#include <memory>

#include "thread_state.h"

namespace hotspan::holder_check {

inline bool state_is_holder(const ThreadState& state) {
  return state.commit_now.load(std::memory_order_relaxed);
}

// Records that the calling thread is attached to `tracer_id` through `state`.
void remember(uint64_t tracer_id, const std::shared_ptr<ThreadState>& state);
// The calling thread's live JS state for the tracer, or nullptr.
std::shared_ptr<ThreadState> attached(uint64_t tracer_id);
// Drops the calling thread's attachment through `state` (detach).
void forget(uint64_t tracer_id, const ThreadState* state);
// Holder test for tracer-wide calls made on the calling thread.
bool thread_is_holder(uint64_t tracer_id);

}  // namespace hotspan::holder_check
