#include "record/imported_thread.h"

#include <utility>

#include "record/span_record.h"
#include "record/stored_span.h"
#include "record/thread_state.h"
#include "record/timeline.h"

namespace hotspan {

ImportedThread::ImportedThread(std::shared_ptr<Tracer> tracer, std::shared_ptr<ThreadState> state)
    : tracer_(std::move(tracer)), state_(std::move(state)) {}

uint32_t ImportedThread::timeline_id() const { return state_->timeline->id(); }

bool ImportedThread::add_name(uint32_t id, std::string_view name) {
  if (id != names_.size()) return false;
  names_.push_back(tracer_->intern(name));
  return true;
}

Status ImportedThread::add(const ImportedSpan& span, std::string_view attrs, const StoredContext* context,
                           uint64_t foreign_parent) {
  if (state_->status.load(std::memory_order_relaxed) != ThreadState::kLive) return Status::kClosed;
  if (span.name >= names_.size()) return Status::kInvalid;
  Timeline& tl = *state_->timeline;
  ChunkCursor& cursor = state_->cursor;
  const uint64_t index = cursor.written;
  const bool has_attrs = !attrs.empty();
  // No chunk, or no room for the attributes: dropped whole, and counted (as fast::end does).
  if (!cursor.ready(tl) || (has_attrs && !tl.add_attrs(index, span.local, attrs))) {
    tl.count_dropped();
    return Status::kOk;
  }
  uint16_t flags = span.flags & (kFlagAbandoned | kFlagError);
  if (has_attrs) flags |= kFlagAttrs;
  if (context != nullptr && context->trace.valid()) {
    flags |= kFlagContext;
    tl.add_context(index, span.local, *context);
  }
  if (foreign_parent != 0) {
    flags |= kFlagParentElsewhere;
    tl.add_foreign_parent(index, span.local, foreign_parent);
  }
  StoredSpan* r = cursor.slot++;
  if (!store_span(r, span.start_ns, span.end_ns, span.local, span.parent_local, names_[span.name], span.depth,
                  flags)) {
    tl.add_long_end(index, span.end_ns);
  }
  cursor.written = index + 1;
  tl.publish_written(cursor.written);
  tl.commit_up_to(cursor.written);
  return Status::kOk;
}

void ImportedThread::count_lost(uint64_t n) {
  if (n != 0) state_->timeline->count_dropped(n);
}

void ImportedThread::mark_exited() { state_->timeline->mark_exited(); }

}  // namespace hotspan
