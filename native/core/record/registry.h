// A tracer's registry: every timeline it ever made (threads, tracks, the
// groups timeline), the thread states (weakly, to close them), and tracks by
// name. Guarded by one Mutex, which nothing on the per-span path takes:
// a thread finds its state through a thread_local (native) or holds it
// (JS env). Timelines are kept for the tracer's lifetime, which is what lets
// pending-queue items name them by raw pointer. Lock order: registry, then
// track / groups, then timeline, then pending queue.
//
// Timeline ids: the tracer's own timelines are numbered 1, 2, ... in the
// order they are made, below kFirstJoinedTimeline; a joined thread's timeline
// (a thread recording in another instance of the core, record/
// imported_thread.h) takes an explicit id at or above it, one id for the
// whole shared tracer, so the span ids derived from it (span_ids.h) are the
// same in the instance that recorded the spans and in this one.
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

// The first id of a joined thread's timeline; the tracer's own stay below.
constexpr uint32_t kFirstJoinedTimeline = 1u << 20;
// Timeline ids stay below this, so that a span id (timeline << 32 | local)
// is exact as a JS number (below 2^53) where the facade reads it as one.
constexpr uint32_t kTimelineIdLimit = 1u << 21;

class Registry {
 public:
  explicit Registry(std::shared_ptr<TracerShared> shared);

  // A new thread timeline and its state. kNative with an empty name gets
  // "native N". Once closed the state is made closed and not registered.
  // `id`: 0 numbers it as the tracer's own; else a joined thread's id (at
  // least kFirstJoinedTimeline, below kTimelineIdLimit, not taken yet). nullptr for any other id,
  // and when the tracer's own ids are used up.
  std::shared_ptr<ThreadState> add_thread(TimelineKind kind, std::string name, uint32_t id = 0);
  // Idempotent by timeline name (the first call's serial flag wins). 0 once
  // closed. A user's track is named "track: <name>", apart from the threads;
  // `as_named` names it `name` itself (hotspan/auto's "http server", "gc").
  // `id`: 0 numbers a new track as the tracer's own; else the tracer-wide id
  // a joined thread's instance (or its owner) gives it, in any range below
  // kTimelineIdLimit, not taken yet (0 is returned for a track of that name
  // under another id).
  uint32_t track(std::string_view name, bool serial, bool as_named = false, uint32_t id = 0);
  std::shared_ptr<AsyncTrack> find_track(uint32_t timeline_id) const;
  std::vector<std::shared_ptr<AsyncTrack>> tracks() const;
  // The groups track, made on first use (so a tracer without groups has no
  // empty "groups" timeline); nullptr when !create and none exists yet.
  // `id` (0: the tracer's own numbering) as add_thread's, for a joined
  // thread's instance, whose own ids must not meet the tracks it numbers
  // with ids the shared tracer gave out.
  std::shared_ptr<GroupTrack> groups(bool create, uint32_t id = 0);
  std::vector<std::shared_ptr<Timeline>> timelines() const;
  // Makes every registered live state return kClosed from now on.
  void close_states();

 private:
  struct Entry {
    std::shared_ptr<Timeline> timeline;
    std::weak_ptr<ThreadState> state;   // thread timelines
    std::shared_ptr<AsyncTrack> track;  // track timelines
  };

  // The entry of timeline `id`, nullptr when there is none: at index id - 1
  // while no joined timeline was made before it (always, on the addon), else
  // through position_. Under mu_.
  const Entry* entry_locked(uint32_t id) const;

  // nullptr when `id` is not one add_thread accepts.
  std::shared_ptr<Timeline> new_timeline_locked(TimelineKind kind, std::string name,
                                                bool serial = false, uint32_t id = 0, bool any_id = false);

  const std::shared_ptr<TracerShared> shared_;
  mutable Mutex mu_;
  std::vector<Entry> entries_;                        // in the order made
  std::unordered_map<uint32_t, size_t> position_;     // timeline id -> index in entries_
  uint32_t own_ids_ = 0;                              // the tracer's own ids given out
  std::unordered_map<std::string, uint32_t> track_ids_;
  std::shared_ptr<GroupTrack> groups_;
  uint32_t natives_ = 0;
};

}  // namespace hotspan
