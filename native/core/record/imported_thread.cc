#include "record/imported_thread.h"

#include <utility>

#include "record/async_track.h"
#include "record/group_track.h"
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

void store_imported(Timeline& tl, ChunkCursor& cursor, int64_t* anchor_due, const ImportedSpan& span, uint32_t name,
                    uint16_t kind_flags, std::string_view attrs, const StoredContext* context,
                    uint64_t foreign_parent) {
  const uint64_t index = cursor.written;
  const bool has_attrs = !attrs.empty();
  // No chunk, or no room for the attributes: dropped whole, and counted (as fast::end does).
  if (!cursor.ready(tl, anchor_due) || (has_attrs && !tl.add_attrs(index, span.local, attrs))) {
    tl.count_dropped();
    return;
  }
  uint16_t flags = (span.flags & (kFlagAbandoned | kFlagError)) | kind_flags;
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
  if (!store_span(r, span.start_ns, span.end_ns, span.local, span.parent_local, name, span.depth, flags)) {
    tl.add_long_end(index, span.end_ns);
  }
  cursor.written = index + 1;
  tl.publish_written(cursor.written);
  tl.commit_up_to(cursor.written);
}

Status ImportedThread::add(const ImportedSpan& span, std::string_view attrs, const StoredContext* context,
                           uint64_t foreign_parent) {
  if (state_->status.load(std::memory_order_relaxed) != ThreadState::kLive) return Status::kClosed;
  if (span.name >= names_.size()) return Status::kInvalid;
  store_imported(*state_->timeline, state_->cursor, nullptr, span, names_[span.name], 0, attrs, context,
                 foreign_parent);
  return Status::kOk;
}

Status ImportedThread::add_track_span(uint32_t track, std::string_view name, bool serial, const ImportedSpan& span,
                                      std::string_view attrs, const StoredContext* context,
                                      uint64_t foreign_parent) {
  if (state_->status.load(std::memory_order_relaxed) != ThreadState::kLive) return Status::kClosed;
  if (span.name >= names_.size()) return Status::kInvalid;
  // The track found by its id keeps its kind: a thread that named it without
  // saying serial recorded it as concurrent (as the js backend's owner maps it).
  std::shared_ptr<AsyncTrack> t = tracer_->find_track(track);
  if (!t && tracer_->track(name, serial, true, track) == track) t = tracer_->find_track(track);
  if (!t || t->timeline().name() != name) {
    state_->timeline->count_dropped();
    return Status::kOk;
  }
  t->import_span(span, names_[span.name], attrs, context, foreign_parent);
  return Status::kOk;
}

uint32_t ImportedThread::group_local(GroupTrack& groups, uint32_t remote) {
  auto [it, added] = group_locals_.try_emplace(remote, 0);
  if (added) it->second = groups.take_local();
  return it->second;
}

Status ImportedThread::add_group(const ImportedSpan& span, std::string_view attrs) {
  if (state_->status.load(std::memory_order_relaxed) != ThreadState::kLive) return Status::kClosed;
  if (span.name >= names_.size()) return Status::kInvalid;
  std::shared_ptr<GroupTrack> groups = tracer_->group_track(true);
  if (!groups) return Status::kClosed;
  ImportedSpan s = span;
  s.local = group_local(*groups, span.local);
  s.parent_local = span.parent_local == 0 ? 0 : group_local(*groups, span.parent_local);
  // Its own local is not named again: a group ends once (its parent, later, is looked up).
  group_locals_.erase(span.local);
  groups->import_span(s, names_[span.name], attrs);
  return Status::kOk;
}

void ImportedThread::count_lost(uint64_t n) {
  if (n != 0) state_->timeline->count_dropped(n);
}

void ImportedThread::mark_exited() { state_->timeline->mark_exited(); }

}  // namespace hotspan
