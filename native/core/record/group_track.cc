#include "record/group_track.h"

#include <utility>

#include "record/imported_thread.h"

namespace hotspan {

GroupTrack::GroupTrack(std::shared_ptr<Timeline> timeline)
    : timeline_(std::move(timeline)), anchor_due_(timeline_->anchor_due()) {}

void GroupTrack::begin(uint32_t name, int64_t now, std::string attrs_json) {
  LockGuard<Mutex> lock(mu_);
  keep_anchored(now);
  stack_.push_back(Open{now, ++next_local_, name, std::move(attrs_json)});
}

Status GroupTrack::end(int64_t now, uint64_t* written) {
  LockGuard<Mutex> lock(mu_);
  if (stack_.empty()) return Status::kNoOpenSpan;
  keep_anchored(now);
  Open o = std::move(stack_.back());
  stack_.pop_back();
  const uint64_t index = cursor_.written;
  const bool has_attrs = !o.attrs.empty();
  // No chunk or no room for the attributes: dropped whole, and counted.
  if (!cursor_.ready(*timeline_, &anchor_due_) ||
      (has_attrs && !timeline_->add_attrs(index, o.local, o.attrs))) {
    timeline_->count_dropped();
    *written = cursor_.written;
    return Status::kOk;
  }
  const uint16_t flags = has_attrs ? kFlagAttrs : 0;
  const uint32_t parent = stack_.empty() ? 0 : stack_.back().local;
  StoredSpan* r = cursor_.slot++;
  if (!store_span(r, o.start, now, o.local, parent, o.name, static_cast<uint16_t>(stack_.size()),
                  flags))
    timeline_->add_long_end(index, now);
  *written = ++cursor_.written;
  timeline_->publish_written(*written);
  return Status::kOk;
}

uint32_t GroupTrack::take_local() {
  LockGuard<Mutex> lock(mu_);
  return ++next_local_;
}

void GroupTrack::import_span(const ImportedSpan& span, uint32_t name, std::string_view attrs) {
  LockGuard<Mutex> lock(mu_);
  store_imported(*timeline_, cursor_, &anchor_due_, span, name, 0, attrs, nullptr, 0);
}

size_t GroupTrack::open_count() const {
  LockGuard<Mutex> lock(mu_);
  return stack_.size();
}

}  // namespace hotspan
