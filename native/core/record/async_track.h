// A named async track: spans that begin on one thread and end on any, on a
// timeline of their own. Everything is guarded by the track's lock (taken
// before the timeline's). Token = track timeline id << 32 | local id, i.e. the
// span id. The caller commits or queues the record after end() returns.
//
// Serial rule (a device stream, one connection): a span starts at
// max(requested start, end of the previous span on the track). It is applied
// when the span ends, against the end of the span recorded before it on the
// track, so it holds whichever of begin/end calls comes first; in FIFO use
// that is exactly the previous span. If ends arrive out of order, the late
// one is moved to the previous end (zero-length): a serial track never
// overlaps.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "record/hot_inline.h"
#include "record/platform_lock.h"
#include "record/timeline.h"
#include "record/tracer.h"
#include "record/yield_lock.h"

namespace hotspan {

struct ImportedSpan;

class AsyncTrack {
 public:
  AsyncTrack(std::shared_ptr<Timeline> timeline, bool serial);

  Timeline& timeline() const { return *timeline_; }
  bool serial() const { return serial_; }

  // Returns the token (never 0). The attributes are copied.
  // `context` (when not null and its trace valid) is stored for the span.
  uint64_t begin(uint32_t name, int64_t now, std::string_view attrs, uint64_t parent_span,
                 const StoredContext* context = nullptr);
  // kInvalid for a token that is not open on this track. On kOk, *written is
  // the timeline's stored count including the new record.
  // `changes` (optional) replaces what the begin set (tracer.h).
  Status end(uint64_t token, int64_t now, uint16_t extra_flags, uint64_t* written,
             AsyncEndChanges* changes = nullptr);

  // begin() and end() for the common span (no context or parent; its ring
  // slot free at the begin; no anchor due; room in the chunk and, for its
  // attributes, in the timeline's attribute block; not serial), inline for
  // the binding's hot calls (async_fast.h). They do nothing and answer
  // 0 / false in every other case: then call begin()/end().
  HOTSPAN_HOT_INLINE uint64_t begin_plain(uint32_t name, int64_t now, std::string_view attrs = {}) {
    LockGuard<YieldLock> lock(mu_);
    const uint32_t local = next_local_ + 1;
    Open& o = ring_[ring_index(local)];
    if (HOTSPAN_UNLIKELY(o.local != 0 || local == 0 || now > anchor_due_)) return 0;
    next_local_ = local;
    // A free slot holds no attributes and no context (release).
    o.start = now;
    o.name = name;
    o.local = local;
    o.parent_span = 0;
    if (!attrs.empty()) o.attrs.assign(attrs);
    ++open_n_;
    return make_span_id(timeline_->id(), local);
  }
  HOTSPAN_HOT_INLINE bool end_plain(uint64_t token, int64_t now, uint16_t extra_flags, uint64_t* written) {
    const auto local = static_cast<uint32_t>(token);
    LockGuard<YieldLock> lock(mu_);
    Open& o = ring_[ring_index(local)];
    if (HOTSPAN_UNLIKELY(o.local != local || local == 0 || static_cast<uint32_t>(token >> 32) != timeline_->id() ||
                         serial_ || now > anchor_due_ || cursor_.slot == cursor_.end || o.parent_span != 0 ||
                         o.context)) {
      return false;
    }
    auto flags = static_cast<uint16_t>(kFlagAsync | (extra_flags & (kFlagError | kFlagAbandoned)));
    if (!o.attrs.empty()) {
      if (HOTSPAN_UNLIKELY(!timeline_->append_attrs(cursor_.written, local, o.attrs))) return false;
      flags |= kFlagAttrs;
      o.attrs.clear();
    }
    store_locked(o, o.start, now, flags, 0, written);
    o.local = 0;  // release(o): nothing else to clear
    --open_n_;
    return true;
  }

  // A joined thread's instance: the next begin() takes `local` (given out
  // by the shared tracer), then numbering goes on from there.
  void set_next_local(uint32_t local) {
    LockGuard<YieldLock> lock(mu_);
    next_local_ = local - 1;
  }
  // A finished span another instance recorded on this track under its
  // tracer-wide id (record/imported_thread.h): stored and committed. On a
  // serial track it moves the rule's previous end forward.
  void import_span(const ImportedSpan& span, uint32_t name, std::string_view attrs, const StoredContext* context,
                   uint64_t foreign_parent);

  size_t open_count() const;
  void append_open(std::vector<std::pair<uint64_t, uint32_t>>& out) const;

 private:
  struct Open {
    int64_t start = 0;
    uint32_t name = 0;
    uint32_t local = 0;  // 0: a free ring slot
    uint64_t parent_span = 0;
    std::string attrs;  // a ring slot keeps its capacity: no allocation in steady state
    std::unique_ptr<StoredContext> context;  // null: none (most spans)
  };
  // Open spans: most end a little after they begin, so span `local` lives in
  // ring_[local % ring_.size()], allocating nothing in steady state. A span
  // whose slot an older open span still holds doubles the ring (up to
  // kMaxRing: a burst of concurrent requests then costs no map node per
  // span), past that goes to overflow_.
  static constexpr uint32_t kRing = 256;
  static constexpr uint32_t kMaxRing = 4096;
  // The size stays a power of two, so the modulo is a mask (a span takes
  // three; a 64-bit division is tens of cycles).
  static_assert((kRing & (kRing - 1)) == 0, "kRing must be a power of two");
  size_t ring_index(uint32_t local) const { return local & (ring_.size() - 1); }
  Open* find_open(uint32_t local);
  Open& slot_for(uint32_t local);
  void release(Open& o);
  // Stores `o` as a record in the ready chunk slot and publishes it. Under mu_.
  HOTSPAN_HOT_INLINE void store_locked(const Open& o, int64_t start, int64_t end_ns, uint16_t flags,
                                       uint32_t parent_local, uint64_t* written) {
    const uint64_t index = cursor_.written;
    StoredSpan* r = cursor_.slot++;
    // Async spans overlap freely, so they carry no depth.
    if (HOTSPAN_UNLIKELY(!store_span(r, start, end_ns, o.local, parent_local, o.name, 0, flags)))
      timeline_->add_long_end(index, end_ns);
    *written = ++cursor_.written;
    timeline_->publish_written(*written);
  }

  const std::shared_ptr<Timeline> timeline_;
  const bool serial_;
  // Not Mutex: nearly every take is uncontended, and a span takes it
  // twice (begin, end). See yield_lock.h.
  mutable YieldLock mu_;
  uint32_t next_local_ = 0;                                   // guarded by mu_
  int64_t last_end_ = std::numeric_limits<int64_t>::min();    // guarded by mu_
  std::vector<Open> ring_;                                    // guarded by mu_
  std::unordered_map<uint32_t, Open> overflow_;               // guarded by mu_
  size_t open_n_ = 0;                                         // guarded by mu_
  ChunkCursor cursor_;                                        // guarded by mu_
  // Ticks timeline: anchor upkeep as for a thread (INT64_MAX on ns). Guarded by mu_.
  int64_t anchor_due_;
  void keep_anchored(int64_t now) {
    if (now > anchor_due_) anchor_due_ = timeline_->anchor_if_stale(now);
  }
};

}  // namespace hotspan
