// Span groups: tracer-wide named phases, one stack for the whole tracer
// (groups nest; they are not per thread), recorded as records on the
// "groups" timeline with parent ids and depth like thread spans. Exporters
// place other spans in groups by time containment, so a timeline created
// while groups are open starts inside them with no bookkeeping here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "record/platform_lock.h"
#include "record/timeline.h"
#include "record/tracer.h"

namespace hotspan {

struct ImportedSpan;

class GroupTrack {
 public:
  explicit GroupTrack(std::shared_ptr<Timeline> timeline);

  Timeline& timeline() const { return *timeline_; }

  void begin(uint32_t name, int64_t now, std::string attrs_json);
  // kNoOpenSpan when no group is open. On kOk, *written is the timeline's
  // stored count including the new record; the caller commits or queues it.
  Status end(int64_t now, uint64_t* written);
  // A new local id, for a group another instance recorded (record/imported_thread.h).
  uint32_t take_local();
  // That group, finished: stored and committed (its ids already this track's).
  void import_span(const ImportedSpan& span, uint32_t name, std::string_view attrs);
  size_t open_count() const;

 private:
  struct Open {
    int64_t start;
    uint32_t local;
    uint32_t name;
    std::string attrs;
  };

  const std::shared_ptr<Timeline> timeline_;
  mutable Mutex mu_;
  uint32_t next_local_ = 0;  // guarded by mu_
  std::vector<Open> stack_;  // guarded by mu_
  ChunkCursor cursor_;       // guarded by mu_
  // Ticks timeline: anchor upkeep as for a thread (INT64_MAX on ns). Guarded by mu_.
  int64_t anchor_due_;
  void keep_anchored(int64_t now) {
    if (now > anchor_due_) anchor_due_ = timeline_->anchor_if_stale(now);
  }
};

}  // namespace hotspan
