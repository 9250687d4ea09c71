// A tracer's registry: every timeline it ever made (threads, tracks, the
// groups timeline), the thread states (weakly, to close them), and tracks by
// name. Guarded by one Mutex, which nothing on the per-span path takes:
// a thread finds its state through a thread_local (native) or holds it
// (JS env). Timelines are kept for the tracer's lifetime, which is what lets
// pending-queue items name them by raw pointer. Lock order: registry, then
// track / groups, then timeline, then pending queue.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "record/async_track.h"
#include "record/group_track.h"
#include "record/platform_lock.h"
#include "record/thread_state.h"
#include "record/timeline.h"
#include "record/tracer_shared.h"

namespace hotspan {

class Registry {
 public:
  explicit Registry(std::shared_ptr<TracerShared> shared);

  // A new thread timeline and its state. kNative with an empty name gets
  // "native N". Once closed the state is made closed and not registered.
  std::shared_ptr<ThreadState> add_thread(TimelineKind kind, std::string name);
  // Idempotent by timeline name (the first call's serial flag wins). 0 once
  // closed. A user's track is named "track: <name>", apart from the threads;
  // `as_named` names it `name` itself (hotspan/auto's "http server", "gc").
  uint32_t track(std::string_view name, bool serial, bool as_named = false);
  std::shared_ptr<AsyncTrack> find_track(uint32_t timeline_id) const;
  std::vector<std::shared_ptr<AsyncTrack>> tracks() const;
  // The groups track, made on first use (so a tracer without groups has no
  // empty "groups" timeline); nullptr when !create and none exists yet.
  std::shared_ptr<GroupTrack> groups(bool create);
  std::vector<std::shared_ptr<Timeline>> timelines() const;
  // Makes every registered live state return kClosed from now on.
  void close_states();

 private:
  struct Entry {
    std::shared_ptr<Timeline> timeline;
    std::weak_ptr<ThreadState> state;   // thread timelines
    std::shared_ptr<AsyncTrack> track;  // track timelines
  };

  std::shared_ptr<Timeline> new_timeline_locked(TimelineKind kind, std::string name,
                                                bool serial = false);

  const std::shared_ptr<TracerShared> shared_;
  mutable Mutex mu_;
  std::vector<Entry> entries_;  // index = timeline id - 1 (ids start at 1)
  std::unordered_map<std::string, uint32_t> track_ids_;
  std::shared_ptr<GroupTrack> groups_;
  uint32_t natives_ = 0;
};

}  // namespace hotspan
