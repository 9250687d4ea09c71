#include "record/registry.h"

#include <utility>

namespace hotspan {

Registry::Registry(std::shared_ptr<TracerShared> shared) : shared_(std::move(shared)) {}

std::shared_ptr<Timeline> Registry::new_timeline_locked(TimelineKind kind, std::string name,
                                                        bool serial, uint32_t id, bool any_id) {
  // Ids start at 1 so that 0 can mean "no timeline" (parent columns). An own
  // id skips those a joined instance's tracks took explicitly (track()).
  if (id == 0) {
    do {
      if (own_ids_ + 1 >= kFirstJoinedTimeline) return nullptr;
      id = ++own_ids_;
    } while (position_.count(id) != 0);
  } else if ((id < kFirstJoinedTimeline && !any_id) || id >= kTimelineIdLimit || position_.count(id) != 0) {
    return nullptr;
  }
  auto tl = std::make_shared<Timeline>(id, kind, std::move(name), serial, shared_->ticks,
                                       shared_->pool, shared_->dict, &shared_->start_anchor);
  position_.emplace(id, entries_.size());
  entries_.push_back(Entry{tl, {}, nullptr});
  return tl;
}

std::shared_ptr<ThreadState> Registry::add_thread(TimelineKind kind, std::string name,
                                                  uint32_t id) {
  // A state that records nothing: the tracer closed (or ran out of its own ids).
  auto unregistered = [&]() {
    auto tl = std::make_shared<Timeline>(0, kind, std::move(name), false, shared_->ticks,
                                         shared_->pool, shared_->dict);
    auto state = std::make_shared<ThreadState>(shared_, std::move(tl));
    state->status.store(ThreadState::kTracerClosed, std::memory_order_relaxed);
    return state;
  };
  LockGuard<Mutex> lock(mu_);
  // Checked under the lock: close() sets the flag, then takes this lock to
  // close the registered states, so a state is either closed there or here.
  if (shared_->closed.load(std::memory_order_acquire)) return unregistered();
  const bool numbered = kind == TimelineKind::kNative && name.empty();
  if (numbered) name = "native " + std::to_string(natives_ + 1);
  auto tl = new_timeline_locked(kind, name, false, id);
  if (!tl) return id != 0 ? nullptr : unregistered();
  if (numbered) ++natives_;
  auto state = std::make_shared<ThreadState>(shared_, std::move(tl));
  entries_.back().state = state;
  return state;
}

uint32_t Registry::track(std::string_view name, bool serial, bool as_named, uint32_t id) {
  LockGuard<Mutex> lock(mu_);
  if (shared_->closed.load(std::memory_order_acquire)) return 0;
  std::string key = as_named ? std::string(name) : "track: " + std::string(name);
  auto it = track_ids_.find(key);
  if (it != track_ids_.end()) {
    // The same name with the other kind is a caller's mistake, not the same
    // track; so is another id than the one the track has.
    if (id != 0 && id != it->second) return 0;
    return entry_locked(it->second)->track->serial() == serial ? it->second : 0;
  }
  auto tl = new_timeline_locked(TimelineKind::kTrack, key, serial, id, true);
  if (!tl) return 0;
  entries_.back().track = std::make_shared<AsyncTrack>(tl, serial);
  track_ids_.emplace(std::move(key), tl->id());
  return tl->id();
}

std::shared_ptr<AsyncTrack> Registry::find_track(uint32_t timeline_id) const {
  LockGuard<Mutex> lock(mu_);
  const Entry* e = entry_locked(timeline_id);
  return e == nullptr ? nullptr : e->track;
}

const Registry::Entry* Registry::entry_locked(uint32_t id) const {
  if (id != 0 && id <= entries_.size() && entries_[id - 1].timeline->id() == id) return &entries_[id - 1];
  auto it = position_.find(id);
  return it == position_.end() ? nullptr : &entries_[it->second];
}

std::vector<std::shared_ptr<AsyncTrack>> Registry::tracks() const {
  std::vector<std::shared_ptr<AsyncTrack>> out;
  LockGuard<Mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.track) out.push_back(e.track);
  }
  return out;
}

std::shared_ptr<GroupTrack> Registry::groups(bool create, uint32_t id) {
  LockGuard<Mutex> lock(mu_);
  if (!groups_ && create && !shared_->closed.load(std::memory_order_acquire)) {
    if (auto tl = new_timeline_locked(TimelineKind::kGroups, "groups", false, id)) {
      groups_ = std::make_shared<GroupTrack>(std::move(tl));
    }
  }
  return groups_;
}

std::vector<std::shared_ptr<Timeline>> Registry::timelines() const {
  std::vector<std::shared_ptr<Timeline>> out;
  LockGuard<Mutex> lock(mu_);
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.timeline);
  return out;
}

void Registry::close_states() {
  LockGuard<Mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (auto s = e.state.lock()) {
      uint8_t live = ThreadState::kLive;
      s->status.compare_exchange_strong(live, ThreadState::kTracerClosed,
                                        std::memory_order_relaxed);
    }
  }
}

}  // namespace hotspan
