#include "record/thread_state.h"

#include <algorithm>
#include <utility>

#include "record/clock.h"
#include "record/open_stack_ids.h"
#include "record/platform_lock.h"
#include "record/span_ids.h"

namespace hotspan {

namespace {
constexpr uint32_t kInitialStack = 32;  // deep enough that steady state never grows
}

ThreadState::ThreadState(std::shared_ptr<TracerShared> shared_block,
                         std::shared_ptr<Timeline> tl)
    : timeline(tl.get()),
      shared(shared_block.get()),
      stack_storage(new OpenSpan[kInitialStack]),
      timeline_ref(std::move(tl)),
      shared_ref(std::move(shared_block)) {
  stack = stack_storage.get();
  capacity = kInitialStack;
  anchor_due = timeline->anchor_due();
}

ThreadState::~ThreadState() = default;

bool ThreadState::refresh_names(uint32_t name) {
  known_names = shared->names.count();
  return name < known_names;
}

bool ThreadState::grow_stack() {
  if (capacity > kMaxDepth) return false;  // depth would not fit a uint16_t
  const uint32_t cap = std::min<uint32_t>(capacity * 2, kMaxDepth + 1);
  std::unique_ptr<OpenSpan[]> bigger(new OpenSpan[cap]);
  std::copy(stack, stack + depth, bigger.get());
  stack_storage = std::move(bigger);
  stack = stack_storage.get();
  capacity = cap;
  return true;
}

void ThreadState::refresh_anchor(int64_t now) { anchor_due = timeline->anchor_if_stale(now); }

Status ThreadState::begin_slow(uint32_t name, int64_t now) {
  const uint8_t st = status.load(std::memory_order_relaxed);
  if (st != kLive) return fast::blocked_status(st);
  if (name >= known_names && !refresh_names(name)) return Status::kInvalid;
  if (depth == capacity && !grow_stack()) return Status::kInvalid;
  if (now > anchor_due) refresh_anchor(now);
  fast::push_open(*this, name, now);
  return Status::kOk;
}

Status ThreadState::end_slow(int64_t now, uint16_t extra_flags) {
  const uint8_t st = status.load(std::memory_order_relaxed);
  if (st != kLive) return fast::blocked_status(st);
  if (depth == 0) return Status::kNoOpenSpan;
  if (now > anchor_due) refresh_anchor(now);
  const uint32_t d = --depth;
  const OpenSpan& o = stack[d];
  // A full budget that gives no chunk, or no room for the attributes: the
  // span is dropped whole and counted.
  if (cursor.slot == cursor.end && !refill_chunk()) return drop_span(o.flags & kSideFlags);
  if ((o.flags & kSideFlags) && !publish_side(cursor.written, o)) return drop_span(0);
  return fast::store_popped(*this, d, now, extra_flags);
}

Status ThreadState::end_side(int64_t now, uint16_t extra_flags) {
  if (status.load(std::memory_order_relaxed) != kLive || depth == 0 || now > anchor_due ||
      cursor.slot == cursor.end) {
    return end_slow(now, extra_flags);
  }
  const uint32_t d = depth - 1;
  const OpenSpan& o = stack[d];
  // Nothing changes before this succeeds, so end_slow can still take the span whole.
  if ((o.flags & kSideFlags) != kFlagAttrs ||
      !timeline->append_attrs(cursor.written, o.local, attr_bytes.from(attr_marks.back()))) {
    return end_slow(now, extra_flags);
  }
  pop_attrs();
  depth = d;
  return fast::store_popped(*this, d, now, extra_flags);
}

bool ThreadState::refill_chunk() { return cursor.ready(*timeline, &anchor_due); }

bool ThreadState::publish_side(uint64_t index, const OpenSpan& o) {
  if (o.flags & kFlagAttrs) {
    const uint32_t at = attr_marks.back();
    const bool added = timeline->add_attrs(index, o.local, attr_bytes.from(at));
    pop_attrs();
    if (!added) {
      // The caller counts the drop; the given context goes with the span.
      if (o.flags & (kFlagContext | kFlagParentElsewhere)) given_stack.pop_back();
      return false;
    }
  }
  if (o.flags & (kFlagContext | kFlagParentElsewhere)) {
    GivenContext& g = given_stack.back();
    if (o.flags & kFlagParentElsewhere) timeline->add_foreign_parent(index, o.local, g.parent_span);
    if (o.flags & kFlagContext) timeline->add_context(index, o.local, std::move(g.context));
    given_stack.pop_back();
  }
  return true;
}

Status ThreadState::drop_span(uint16_t side) {
  if (side & kFlagAttrs) pop_attrs();
  if (side & (kFlagContext | kFlagParentElsewhere)) given_stack.pop_back();
  timeline->count_dropped();
  return Status::kOk;
}

void ThreadState::publish_batch() {
  // A flush() sweep may have committed part of the batch already; count only
  // the rest, so pending() and the wake see records that really wait.
  const uint64_t base = std::max(pushed, timeline->committed());
  pushed = cursor.written;
  if (cursor.written <= base) return;
  shared->enqueue(timeline, cursor.written, static_cast<uint32_t>(cursor.written - base));
}

Status ThreadState::end_after_close(uint64_t w) {
  const uint8_t st = status.load(std::memory_order_relaxed);
  // Only close() changes another thread's status; retiring is this thread's own.
  if (st != kTracerClosed) return fast::blocked_status(st);
  // close() commits everything written before its barrier, once, and never
  // again after: wait for it (it takes no lock this thread holds).
  while (!shared->close_done.load(std::memory_order_acquire)) yield_now();
  return timeline->committed() >= w ? Status::kOk : Status::kClosed;
}

void ThreadState::abandon_open(int64_t now) {
  // end() refuses once the tracer closed, which may happen during this loop
  // (close() on another thread): stop then, like any end() after close.
  while (depth > 0 && fast::end(*this, now, kFlagAbandoned) == Status::kOk) {
  }
}

void ThreadState::on_thread_exit() {
  if (status.load(std::memory_order_relaxed) == kLive) {
    abandon_open(shared->now());
  }
  // Closed meanwhile: close() committed what the trace keeps.
  if (status.load(std::memory_order_relaxed) == kLive) {
    if (finalizes_now()) {
      timeline->commit_owner(cursor.written);
    } else {
      publish_batch();
    }
  }
  // A closed tracer keeps answering kClosed; otherwise later calls (from
  // another thread_local destructor) are refused as a retired state.
  uint8_t live = kLive;
  status.compare_exchange_strong(live, kRetired, std::memory_order_relaxed);
  timeline->mark_exited();
}

// ---- the out-of-line API of tracer.h ----

Status begin(ThreadState& state, uint32_t name, int64_t now) {
  return fast::begin(state, name, now);
}

Status begin_with_attrs(ThreadState& state, uint32_t name, int64_t now, std::string_view attrs_json) {
  const size_t mark = state.attr_bytes.size();
  state.attr_bytes.append(attrs_json);
  return begin_with_attr_bytes(state, name, now, mark);
}

Status begin_with_attr_bytes(ThreadState& state, uint32_t name, int64_t now, size_t mark) {
  return fast::begin_with_attr_bytes(state, name, now, mark);
}

Status begin_in_context(ThreadState& state, uint32_t name, int64_t now, std::string attrs_json,
                        const StoredContext* context, uint64_t parent_span) {
  const Status s = begin_with_attrs(state, name, now, std::move(attrs_json));
  if (s != Status::kOk) return s;
  const bool has_context = context != nullptr && context->trace.valid();
  if (!has_context && parent_span == 0) return s;
  GivenContext g;
  if (has_context) g.context = *context;
  g.parent_span = parent_span;
  state.stack[state.depth - 1].flags |=
      (has_context ? kFlagContext : 0) | (parent_span != 0 ? kFlagParentElsewhere : 0);
  state.given_stack.push_back(std::move(g));
  return s;
}

SpanIds open_span_ids(const ThreadState& state, uint64_t salt, uint64_t sampler) {
  return open_stack_ids(state.timeline->id(), state.stack, state.depth, state.given_stack,
                        state.given_stack.size(), salt, sampler);
}

Status end(ThreadState& state, int64_t now, uint16_t extra_flags) {
  return fast::end(state, now, extra_flags);
}

size_t open_depth(const ThreadState& state) { return state.depth; }

uint32_t innermost_local(const ThreadState& state) {
  return state.depth == 0 ? 0 : state.stack[state.depth - 1].local;
}

uint32_t timeline_id(const ThreadState& state) { return state.timeline->id(); }

Status publish(ThreadState& state) {
  const uint8_t st = state.status.load(std::memory_order_relaxed);
  if (st != ThreadState::kLive) return fast::blocked_status(st);
  // A holder's records are already finalized.
  if (!state.finalizes_now()) state.publish_batch();
  return Status::kOk;
}

}  // namespace hotspan
