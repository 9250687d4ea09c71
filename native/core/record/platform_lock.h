// The locks the recording core takes, named once so a build can swap them
// (and HOTSPAN_THREADS, 0 in that build, for what only threads need):
// natively the standard library's; where libc++ is built without threads
// (the single-threaded WebAssembly build, in which one instance is one
// thread and <mutex> and <thread> do not exist) no-ops with the same
// interface. The core names these, never std::mutex, std::lock_guard or
// std::this_thread, except in what only a threaded build runs (the chunk
// reserve's filler thread, the writer threads).
#pragma once

#include <cstddef>  // libc++'s configuration, which says whether it has threads

#ifdef _LIBCPP_HAS_NO_THREADS

namespace hotspan {

struct Mutex {
  void lock() noexcept {}
  bool try_lock() noexcept { return true; }
  void unlock() noexcept {}
};

template <class M>
class LockGuard {
 public:
  explicit LockGuard(M& m) : m_(m) { m_.lock(); }
  ~LockGuard() { m_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  M& m_;
};

inline void yield_now() noexcept {}

// std::call_once's shape for the one thread there is.
struct OnceFlag {
  bool done = false;
};
template <class F>
void call_once(OnceFlag& flag, F&& f) {
  if (flag.done) return;
  flag.done = true;
  f();
}

}  // namespace hotspan

#define HOTSPAN_THREADS 0

#else

#include <mutex>
#include <thread>

namespace hotspan {

using Mutex = std::mutex;
template <class M>
using LockGuard = std::lock_guard<M>;
inline void yield_now() noexcept { std::this_thread::yield(); }
using OnceFlag = std::once_flag;
using std::call_once;

}  // namespace hotspan

#define HOTSPAN_THREADS 1

#endif
