// One thread's recording state for one tracer: its open-span stack and its
// cursor into its own timeline. Only the owning thread touches the stack and
// the cursor; other threads read the timeline through its watermarks and
// mutex, and may flip `status` (close) with a relaxed store.
//
// The hot path (fast::begin / fast::end) is inline here so the binding can
// inline it: a status load, a name-id bound check, a stack push or pop, one
// 28-byte store and one or two release stores of a watermark, plus one
// compare against anchor_due (anchor upkeep of a ticks timeline, out of
// line). Every rare case is tested first and handled out of line
// (begin_slow, end_slow), so the common path makes no call before its store.
// No lock, no allocation in steady state, no virtual call. The out-of-line
// functions declared in tracer.h forward to these.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "record/byte_stack.h"
#include "record/close_barrier.h"
#include "record/holder_check.h"
#include "record/hot_inline.h"
#include "record/pending_queue.h"
#include "record/span_record.h"
#include "record/stored_span.h"
#include "record/timeline.h"
#include "record/tracer.h"
#include "record/tracer_shared.h"

namespace hotspan {

struct OpenSpan {
  int64_t start;
  uint32_t local;
  uint32_t name;
  uint16_t flags;  // kFlagAttrs when its attribute bytes wait in attr_bytes; kSideFlags
};

// Flags of an open span whose side data waits on the thread's cold stacks
// (attr_bytes, given_stack) until its end publishes them.
constexpr uint16_t kSideFlags = kFlagAttrs | kFlagContext | kFlagParentElsewhere;

// What begin_in_context gave an open span (kFlagContext, kFlagParentElsewhere).
struct GivenContext {
  StoredContext context;     // valid trace when kFlagContext
  uint64_t parent_span = 0;  // tracer-wide span id when kFlagParentElsewhere
};

// Aligned to a cache line: the hot fields below (the first 88 bytes) then
// share no line with another thread's state or any other object.
class alignas(64) ThreadState {
 public:
  enum : uint8_t {
    kLive = 0,
    kTracerClosed = 1,  // calls return Status::kClosed
    kRetired = 2,       // detached or its thread exited: Status::kInvalid
  };
  static constexpr uint32_t kMaxDepth = 0xFFFF;  // depth is a uint16_t

  ThreadState(std::shared_ptr<TracerShared> shared, std::shared_ptr<Timeline> timeline);
  ~ThreadState();
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;

  // ---- hot fields (owner thread) ----
  std::atomic<uint8_t> status{kLive};
  // Set by holder_check::grant / revoke (attach, detach). Atomic only so a
  // misuse from another thread is not undefined behaviour.
  std::atomic<bool> holder{false};
  // depth .. begin_name stay adjacent: the addon lends them to JS as one
  // Uint32Array (native/addon/tracer_object.cc StateView).
  uint32_t depth = 0;
  uint32_t capacity = 0;
  uint32_t known_names = 0;  // name ids below this exist (they are never removed)
  uint32_t next_local = 0;
  // Written by JS through that view just before it calls the binding's
  // argument-less begin (native/addon/call_slots.h), which reads the name id
  // here instead of through Node-API. Any value is safe: fast::begin checks it.
  // Fills what was padding before `pushed`.
  uint32_t begin_name = 0;
  uint64_t pushed = 0;  // cursor.written at the last queue push
  // Ticks timeline: the tick past which begin/end add an anchor (one compare
  // on the hot path). INT64_MAX on an ns timeline.
  int64_t anchor_due = INT64_MAX;
  OpenSpan* stack = nullptr;
  ChunkCursor cursor;
  Timeline* timeline;    // == timeline_ref.get()
  TracerShared* shared;  // == shared_ref.get()

  // ---- cold ----
  // The attribute bytes of the open spans with kFlagAttrs, innermost last,
  // and where each begins: a stack whose capacity stays, so attributes cost
  // no allocation in steady state. A binding may write a span's bytes here
  // directly, then call begin_with_attr_bytes (tracer.h).
  ByteStack attr_bytes;
  std::vector<uint32_t> attr_marks;
  std::vector<GivenContext> given_stack;  // of open spans with kFlagContext or kFlagParentElsewhere
  std::unique_ptr<OpenSpan[]> stack_storage;
  std::shared_ptr<Timeline> timeline_ref;
  std::shared_ptr<TracerShared> shared_ref;

  // Out-of-line slow paths of fast::begin / fast::end.
  // fast::begin past one of its rare cases (closed, a name not seen yet, a
  // full stack, an anchor due): each handled in turn, then the push.
  HOTSPAN_COLD Status begin_slow(uint32_t name, int64_t now);
  // fast::end past one of its rare cases before the store (closed, no open
  // span, an anchor due, a full chunk, side data): each handled in turn.
  HOTSPAN_COLD Status end_slow(int64_t now, uint16_t extra_flags);
  // fast::end past end_ready: a span whose only side data is its attributes
  // (the common attribute span), its bytes fitting the timeline's block, is
  // stored here with no cold call and no second look at the rare cases;
  // anything else goes on to end_slow. Out of line, not cold: it is the
  // attribute span's every end.
  HOTSPAN_OUTLINE Status end_side(int64_t now, uint16_t extra_flags);
  HOTSPAN_COLD bool refresh_names(uint32_t name);  // re-reads the name count; name valid?
  HOTSPAN_COLD bool grow_stack();
  HOTSPAN_COLD bool refill_chunk();  // false: the budget is full (drop)
  HOTSPAN_COLD void refresh_anchor(int64_t now);
  // Publishes the side data of the span just popped (kSideFlags) for record
  // `index`; false: the attributes did not fit the budget (the span is
  // dropped, its side data discarded).
  HOTSPAN_COLD bool publish_side(uint64_t index, const OpenSpan& o);
  // The span just popped is not stored: counted as dropped, its side data
  // still on the cold stacks (`side`: its kSideFlags) discarded. Returns kOk.
  HOTSPAN_COLD Status drop_span(uint16_t side);
  void pop_attrs() {
    attr_bytes.cut(attr_marks.back());
    attr_marks.pop_back();
  }
  // The holder decision (holder_check.h): true when this thread commits the
  // records it stored itself, false when it must queue them.
  HOTSPAN_HOT_INLINE bool finalizes_now() { return holder_check::finalize_now(holder, *shared); }
  // Queues the records stored since the last push (non-holder path).
  HOTSPAN_COLD void publish_batch();
  // end() stored record `w`, then found the tracer closed: waits for close()
  // to finish, then kOk if its final commit took the record, else kClosed.
  HOTSPAN_COLD Status end_after_close(uint64_t w);
  // Abandons open spans at `now` (kFlagAbandoned), stores and queues them.
  void abandon_open(int64_t now);
  // Native thread exit: abandon, queue what is left, mark the timeline exited.
  void on_thread_exit();
};

namespace fast {

inline Status blocked_status(uint8_t status) {
  return status == ThreadState::kTracerClosed ? Status::kClosed : Status::kInvalid;
}

HOTSPAN_HOT_INLINE void push_open(ThreadState& s, uint32_t name, int64_t now) {
  OpenSpan& o = s.stack[s.depth++];
  o.start = now;
  o.local = ++s.next_local;
  o.name = name;
  o.flags = 0;
}

// begin() when none of its rare cases applies: true when the span opened,
// false (nothing done) when begin_slow must handle it. The common path makes
// no call, so a caller that tail-calls begin_slow needs no stack frame.
HOTSPAN_HOT_INLINE bool begin_common(ThreadState& s, uint32_t name, int64_t now) {
  if (HOTSPAN_UNLIKELY(s.status.load(std::memory_order_relaxed) != ThreadState::kLive || name >= s.known_names ||
                       s.depth == s.capacity || now > s.anchor_due)) {
    return false;
  }
  push_open(s, name, now);
  return true;
}

HOTSPAN_HOT_INLINE Status begin(ThreadState& s, uint32_t name, int64_t now) {
  return begin_common(s, name, now) ? Status::kOk : s.begin_slow(name, now);
}

// begin_with_attr_bytes (tracer.h), inline for the binding's attribute begin.
HOTSPAN_HOT_INLINE Status begin_with_attr_bytes(ThreadState& s, uint32_t name, int64_t now, size_t mark) {
  const Status st = fast::begin(s, name, now);
  if (st != Status::kOk || s.attr_bytes.size() == mark) {
    s.attr_bytes.cut(mark);
    return st;
  }
  s.stack[s.depth - 1].flags |= kFlagAttrs;
  s.attr_marks.push_back(static_cast<uint32_t>(mark));
  return st;
}

// end() when none of its rare cases before the store applies (closed, no
// open span, an anchor due, a full chunk, side data to publish): then it
// makes no call up to the store.
HOTSPAN_HOT_INLINE bool end_ready(const ThreadState& s, int64_t now) {
  return !HOTSPAN_UNLIKELY(s.status.load(std::memory_order_relaxed) != ThreadState::kLive || s.depth == 0 ||
                           now > s.anchor_due || s.cursor.slot == s.cursor.end ||
                           (s.stack[s.depth - 1].flags & kSideFlags) != 0);
}

// Stores the span just popped (at depth d: its chunk slot ready, its side
// data published) and commits or queues it.
HOTSPAN_HOT_INLINE Status store_popped(ThreadState& s, uint32_t d, int64_t now, uint16_t extra_flags) {
  const OpenSpan& o = s.stack[d];
  StoredSpan* r = s.cursor.slot++;
  const uint32_t parent = d != 0 ? s.stack[d - 1].local : 0;
  // Callers may add error/abandoned; the structural flags are the core's.
  const auto flags = static_cast<uint16_t>(o.flags | (extra_flags & (kFlagError | kFlagAbandoned)));
  // A given parent (kFlagParentElsewhere, in the foreign side table) wins
  // over parent_local for every reader.
  if (HOTSPAN_UNLIKELY(
          !store_span(r, o.start, now, o.local, parent, o.name, static_cast<uint16_t>(d), flags)))
    s.timeline->add_long_end(s.cursor.written, now);
  const uint64_t w = ++s.cursor.written;
  s.timeline->publish_written(w);
  // close() may have run since the status check: OK must mean the record is
  // in the trace (close_barrier.h).
  close_barrier::writer();
  if (HOTSPAN_UNLIKELY(s.status.load(std::memory_order_relaxed) != ThreadState::kLive)) {
    return s.end_after_close(w);
  }
  if (s.finalizes_now()) {
    s.timeline->commit_owner(w);
  } else if (HOTSPAN_UNLIKELY(w - s.pushed >= PendingQueue::kBatch)) {
    s.publish_batch();
  }
  return Status::kOk;
}

HOTSPAN_HOT_INLINE Status end(ThreadState& s, int64_t now, uint16_t extra_flags = 0) {
  if (HOTSPAN_UNLIKELY(!end_ready(s, now))) return s.end_side(now, extra_flags);
  return store_popped(s, --s.depth, now, extra_flags);
}

}  // namespace fast
}  // namespace hotspan
