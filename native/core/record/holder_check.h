// The holder check: may this thread finalize records of this tracer now?
//
// Finalizing (committing) a record makes it visible to readers. Only a
// holder does it: a JS thread attached to THIS tracer (attach_js_thread),
// until it is detached or exits. Every other thread queues its records on the
// tracer's pending queue and a holder commits them at its next drain.
//
// The decision is made here and nowhere else. Every site that stores a
// record asks its thread state, ThreadState::finalizes_now(), which is
// finalize_now() below over the state's `holder` flag: fast::end, thread exit
// and publish() for the state's own records, and the tracer-wide calls
// (async_end, group_end, made on any thread) through holder_for(), which
// finds the calling thread's state for the tracer in its attachments (or,
// for async_end from a binding, that binding's own state: AsyncCaller).
//
// A holder that finalizes first drains what other threads queued (the
// piggy-back drain), so queued records do not wait behind its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "record/hot_inline.h"
#include "record/tracer_shared.h"

namespace hotspan {

class ThreadState;

namespace holder_check {

HOTSPAN_OUTLINE void piggyback_drain(TracerShared& shared);

// The decision over a state's flag: true when the caller commits its records
// itself (after the piggy-back drain), false when it must queue them.
HOTSPAN_HOT_INLINE bool finalize_now(const std::atomic<bool>& holder, TracerShared& shared) {
  if (!holder.load(std::memory_order_relaxed)) return false;
  if (HOTSPAN_UNLIKELY(shared.queue.nonempty())) piggyback_drain(shared);
  return true;
}

// Makes `state` the calling thread's holder state for `tracer_id`.
void grant(uint64_t tracer_id, const std::shared_ptr<ThreadState>& state);
// The calling thread's live holder state for the tracer, or nullptr.
std::shared_ptr<ThreadState> holder_for(uint64_t tracer_id);
// `state` stops being a holder (detach, thread exit).
void revoke(uint64_t tracer_id, ThreadState& state);

}  // namespace holder_check
}  // namespace hotspan
