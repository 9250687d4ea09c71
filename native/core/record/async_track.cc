#include "record/async_track.h"

#include <algorithm>

#include "record/imported_thread.h"

namespace hotspan {

AsyncTrack::AsyncTrack(std::shared_ptr<Timeline> timeline, bool serial)
    : timeline_(std::move(timeline)),
      serial_(serial),
      ring_(kRing),
      anchor_due_(timeline_->anchor_due()) {}

uint64_t AsyncTrack::begin(uint32_t name, int64_t now, std::string_view attrs,
                           uint64_t parent_span, const StoredContext* context) {
  std::unique_ptr<StoredContext> given;
  if (context != nullptr && context->trace.valid()) given = std::make_unique<StoredContext>(*context);
  LockGuard<YieldLock> lock(mu_);
  keep_anchored(now);
  const uint32_t local = ++next_local_;
  Open& o = slot_for(local);
  o.start = now;
  o.name = name;
  o.local = local;
  o.parent_span = parent_span;
  if (!attrs.empty()) o.attrs.assign(attrs);  // a free slot's attrs are empty (release)
  o.context = std::move(given);
  ++open_n_;
  return make_span_id(timeline_->id(), local);
}

AsyncTrack::Open& AsyncTrack::slot_for(uint32_t local) {
  for (;;) {
    Open& slot = ring_[ring_index(local)];
    if (slot.local == 0) return slot;
    if (ring_.size() >= kMaxRing) return overflow_[local];
    // Doubling keeps every open span's slot distinct: local % 2n differs
    // wherever local % n did.
    std::vector<Open> grown(ring_.size() * 2);
    for (Open& o : ring_) {
      if (o.local != 0) grown[o.local & (grown.size() - 1)] = std::move(o);
    }
    ring_ = std::move(grown);
  }
}

AsyncTrack::Open* AsyncTrack::find_open(uint32_t local) {
  Open& slot = ring_[ring_index(local)];
  if (local != 0 && slot.local == local) return &slot;
  auto it = overflow_.find(local);
  return it == overflow_.end() ? nullptr : &it->second;
}

void AsyncTrack::release(Open& o) {
  --open_n_;
  if (&o == &ring_[ring_index(o.local)]) {
    o.local = 0;
    o.attrs.clear();
    o.context.reset();
  } else {
    overflow_.erase(o.local);
  }
}

Status AsyncTrack::end(uint64_t token, int64_t now, uint16_t extra_flags, uint64_t* written,
                       AsyncEndChanges* changes) {
  if (static_cast<uint32_t>(token >> 32) != timeline_->id()) return Status::kInvalid;
  const auto local = static_cast<uint32_t>(token);
  LockGuard<YieldLock> lock(mu_);
  Open* found = find_open(local);
  if (found == nullptr) return Status::kInvalid;
  Open& o = *found;
  const int64_t read = now;  // the caller's clock read, before a given end replaces it
  if (changes != nullptr && changes->has_end) now = timeline_->tick_of_ns(changes->end_ns, read);
  keep_anchored(now);
  if (changes != nullptr) {
    if (changes->has_start) o.start = timeline_->tick_of_ns(changes->start_ns, read);
    if (changes->name != UINT32_MAX) o.name = changes->name;
    if (changes->has_attrs) o.attrs = std::move(changes->attrs_json);
  }

  int64_t start = o.start;
  int64_t end_ns = now;
  if (serial_) {
    start = std::max(start, last_end_);
    // An end that arrives late (its thread read the clock, then lost the
    // race for the lock) becomes zero-length at the previous end: a serial
    // track never overlaps and start <= end holds.
    end_ns = std::max(end_ns, start);
    last_end_ = end_ns;
  }

  const uint64_t index = cursor_.written;
  const bool has_attrs = !o.attrs.empty();
  // No chunk or no room for the attributes: dropped whole, and counted.
  if (!cursor_.ready(*timeline_, &anchor_due_) ||
      (has_attrs && !timeline_->add_attrs(index, local, o.attrs))) {
    release(o);
    timeline_->count_dropped();
    *written = cursor_.written;
    return Status::kOk;
  }
  uint16_t flags = static_cast<uint16_t>(kFlagAsync | (extra_flags & (kFlagError | kFlagAbandoned)));
  if (has_attrs) flags |= kFlagAttrs;
  uint32_t parent_local = 0;
  if (o.parent_span != 0) {
    parent_local = static_cast<uint32_t>(o.parent_span);
    if (static_cast<uint32_t>(o.parent_span >> 32) != timeline_->id()) {
      flags |= kFlagParentElsewhere;
      timeline_->add_foreign_parent(index, local, o.parent_span);
    }
  }
  if (o.context) {
    flags |= kFlagContext;
    timeline_->add_context(index, local, std::move(*o.context));
  }
  store_locked(o, start, end_ns, flags, parent_local, written);
  release(o);
  return Status::kOk;
}

void AsyncTrack::import_span(const ImportedSpan& span, uint32_t name, std::string_view attrs,
                             const StoredContext* context, uint64_t foreign_parent) {
  LockGuard<YieldLock> lock(mu_);
  if (serial_) last_end_ = std::max(last_end_, span.end_ns);
  store_imported(*timeline_, cursor_, &anchor_due_, span, name, kFlagAsync, attrs, context, foreign_parent);
}

size_t AsyncTrack::open_count() const {
  LockGuard<YieldLock> lock(mu_);
  return open_n_;
}

void AsyncTrack::append_open(std::vector<std::pair<uint64_t, uint32_t>>& out) const {
  LockGuard<YieldLock> lock(mu_);
  for (const Open& o : ring_) {
    if (o.local != 0) out.emplace_back(make_span_id(timeline_->id(), o.local), o.name);
  }
  for (const auto& [local, o] : overflow_) out.emplace_back(make_span_id(timeline_->id(), local), o.name);
}

}  // namespace hotspan
