// Tracer::async_begin / async_end for a binding's common async span, inline
// as fast::begin / end are for a thread's (thread_state.h): a span with no
// context or parent on the caller's cached track, begun and ended on the
// caller's live thread. They make no call up to the track's lock and answer
// 0 / false without doing anything in every other case, which the Tracer
// call handles; the forms that take the Tracer (at the end) make that call.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "record/async_caller.h"
#include "record/async_track.h"
#include "record/hot_inline.h"
#include "record/thread_state.h"
#include "record/tracer.h"

namespace hotspan::fast {

// The caller's state may record (the tracer is open: close() sets every
// status) and the cached track is `track`. Called on the state's own thread
// (a binding's env thread), which alone may refresh its known names.
HOTSPAN_HOT_INLINE AsyncTrack* cached_track(const AsyncCaller& c, uint32_t track) {
  const ThreadState* s = c.state;
  if (HOTSPAN_UNLIKELY(s == nullptr || s->status.load(std::memory_order_relaxed) != ThreadState::kLive ||
                       c.track_id != track)) {
    return nullptr;
  }
  return c.track.get();
}

HOTSPAN_HOT_INLINE uint64_t async_begin(const AsyncCaller& c, uint32_t track, uint32_t name, int64_t now,
                                        std::string_view attrs = {}) {
  AsyncTrack* t = cached_track(c, track);
  if (HOTSPAN_UNLIKELY(t == nullptr)) return 0;
  if (HOTSPAN_UNLIKELY(name >= c.state->known_names) && !c.state->refresh_names(name)) return 0;
  return t->begin_plain(name, now, attrs);
}

// The record is committed at once on a holder (a JS thread), else queued.
HOTSPAN_HOT_INLINE bool async_end(const AsyncCaller& c, uint64_t token, int64_t now, uint16_t extra_flags) {
  AsyncTrack* t = cached_track(c, static_cast<uint32_t>(token >> 32));
  if (HOTSPAN_UNLIKELY(t == nullptr)) return false;
  uint64_t written;
  if (HOTSPAN_UNLIKELY(!t->end_plain(token, now, extra_flags, &written))) return false;
  if (c.state->finalizes_now()) {
    t->timeline().commit_up_to(written);
  } else {
    c.state->shared->enqueue(&t->timeline(), written, 1);
  }
  return true;
}

// The inline call, else Tracer::async_begin (which also fills the cache).
HOTSPAN_HOT_INLINE uint64_t async_begin(Tracer& tracer, AsyncCaller& c, uint32_t track, uint32_t name, int64_t now,
                                        std::string_view attrs = {}) {
  const uint64_t token = async_begin(c, track, name, now, attrs);
  return token != 0 ? token : tracer.async_begin(track, name, now, attrs, 0, &c);
}

// The inline call, else Tracer::async_end.
HOTSPAN_HOT_INLINE Status async_end(Tracer& tracer, AsyncCaller& c, uint64_t token, int64_t now,
                                    uint16_t extra_flags) {
  return async_end(c, token, now, extra_flags) ? Status::kOk : tracer.async_end(token, now, extra_flags, &c);
}

}  // namespace hotspan::fast
