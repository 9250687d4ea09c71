// One caller's cache for async spans (a binding keeps one per env thread):
// the track it used last and its own thread state. With it, the common call
// (the same track again, ended on the holder thread that began it) takes no
// registry lock and no holder lookup; Tracer::async_begin/async_end fill it.
#pragma once

#include <cstdint>
#include <memory>

namespace hotspan {

class AsyncTrack;
class ThreadState;

struct AsyncCaller {
  uint32_t track_id = 0;
  std::shared_ptr<AsyncTrack> track;  // tracks live as long as their tracer
  ThreadState* state = nullptr;       // the caller's state for this tracer, if any
};

}  // namespace hotspan
