#include "record/chunk_reserve.h"

#include "record/platform_lock.h"

#if HOTSPAN_THREADS
#include <condition_variable>
#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace hotspan::chunk_reserve {

namespace {

constexpr size_t kPageBytes = 4096;  // the smallest page size Linux uses on x86-64 and arm64

struct Reserve {
  std::mutex mu;
  std::condition_variable wanted;
  std::vector<void*> ready;  // guarded by mu
  bool started = false;      // guarded by mu

  // The filler's push_back then never allocates (nothing may throw there).
  Reserve() { ready.reserve(kHighWater); }

  void fill_forever() {
#if defined(__linux__)
    // Idle priority: the reserve only uses a CPU nothing else wants. On a
    // busy machine it then rarely runs and writers fault their own chunks in,
    // instead of the filler taking CPU from the process (or its neighbours).
    // Best effort: on failure it runs at normal priority.
    sched_param idle{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
#endif
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      wanted.wait(lock, [this] { return ready.size() < kLowWater; });
      bool out_of_memory = false;
      while (!out_of_memory && ready.size() < kHighWater) {
        lock.unlock();
        // Out of memory: stop filling; writers allocate (and report) themselves.
        void* chunk = ::operator new(kChunkBytes, std::nothrow);
        if (chunk != nullptr) {
          // One write per page faults it in here, not on the writer. The
          // content does not matter: records are written before they are read.
          // A chunk need not start on a page boundary (malloc's own headers,
          // a sanitizer's redzones), so it spans 8 pages, not 7: touch its
          // first byte and every page boundary inside it.
          auto* bytes = static_cast<volatile unsigned char*>(chunk);
          const uintptr_t base = reinterpret_cast<uintptr_t>(chunk);
          bytes[0] = 0;
          for (uintptr_t page = (base / kPageBytes + 1) * kPageBytes; page < base + kChunkBytes;
               page += kPageBytes) {
            bytes[page - base] = 0;
          }
        }
        lock.lock();
        if (chunk == nullptr) {
          out_of_memory = true;
        } else {
          ready.push_back(chunk);
        }
      }
      // Retry at the next take(), not in a loop.
      if (out_of_memory) wanted.wait(lock);
    }
  }
};

bool read_enabled() {
  const char* v = std::getenv("HOTSPAN_CHUNK_RESERVE");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

// Leaked on purpose: the filler blocks on it for the life of the process,
// and must not see it destroyed by exit-time destructors.
Reserve& reserve() {
  static Reserve* r = new Reserve;
  return *r;
}

}  // namespace

bool enabled() {
  static const bool on = read_enabled();
  return on;
}

void* take() {
  if (enabled()) {
    Reserve& r = reserve();
    void* chunk = nullptr;
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(r.mu);
      if (!r.started) {
        r.started = true;
        try {
          std::thread([&r] { r.fill_forever(); }).detach();
        } catch (const std::system_error&) {
          // No thread to be had: every chunk falls back to a plain allocation.
        }
      }
      if (!r.ready.empty()) {
        chunk = r.ready.back();
        r.ready.pop_back();
      }
      wake = r.ready.size() < kLowWater;
    }
    if (wake) r.wanted.notify_one();
    if (chunk != nullptr) return chunk;
  }
  return ::operator new(kChunkBytes);
}

size_t ready() {
  if (!enabled()) return 0;
  Reserve& r = reserve();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.ready.size();
}

}  // namespace hotspan::chunk_reserve

#else  // one thread (the WebAssembly build): no filler, every chunk is plain

namespace hotspan::chunk_reserve {

bool enabled() { return false; }
void* take() { return ::operator new(kChunkBytes); }
size_t ready() { return 0; }

}  // namespace hotspan::chunk_reserve

#endif
