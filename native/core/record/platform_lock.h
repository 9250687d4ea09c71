// The locks the recording core takes, named once so a build can swap them:
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

}  // namespace hotspan

#else

#include <mutex>
#include <thread>

namespace hotspan {

using Mutex = std::mutex;
template <class M>
using LockGuard = std::lock_guard<M>;
inline void yield_now() noexcept { std::this_thread::yield(); }

}  // namespace hotspan

#endif
