// A list that every thread has one of, keyed by tracer: the holder check's
// attachments, the native threads' states and the C ABI's per-thread cache
// are each one. What they share is teardown: a thread_local object is
// destroyed at thread exit, and other thread_local destructors that run
// after it (a consumer's RAII scope, another cache) may still call in. So the
// list sets a trivially destructible flag as it dies, and get() answers
// nullptr from then on instead of touching a destroyed vector.
#pragma once

#include <vector>

namespace hotspan {

// Entry: the element type (one list per Entry type). OnExit: called with
// the entries as the thread exits, after get() started answering nullptr.
template <typename Entry, void (*OnExit)(std::vector<Entry>&) = nullptr>
class PerThreadList {
 public:
  // The calling thread's list, or nullptr once it was destroyed.
  static std::vector<Entry>* get() { return gone_ ? nullptr : &list_.entries; }

 private:
  struct List {
    std::vector<Entry> entries;
    ~List() {
      gone_ = true;
      if constexpr (OnExit != nullptr) OnExit(entries);
    }
  };
  static inline thread_local bool gone_ = false;
  static inline thread_local List list_;
};

}  // namespace hotspan
