// The chunk reserve: a writer that takes a chunk from a full reserve writes
// all of it without a page fault of its own (the reserve's thread took them),
// concurrent takers get distinct writable chunks, and the reserve refills.
//
// Two measures of "the reserve's thread took the faults": every page the
// chunk overlaps is resident when it is taken (mincore; holds under every
// sanitizer), and writing the whole chunk costs the writer no minor fault
// (getrusage; not under ThreadSanitizer, whose interceptors write shadow
// memory that faults on its own).
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <set>
#include <thread>
#include <vector>

#include "check.h"
#include "record/chunk_reserve.h"

namespace {

namespace reserve = hotspan::chunk_reserve;

long thread_minor_faults() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

// Pages overlapping [p, p + n) that are not resident.
size_t pages_not_resident(const void* p, size_t n) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + n;
  std::vector<unsigned char> vec((end - first + page - 1) / page);
  if (mincore(reinterpret_cast<void*>(first), end - first, vec.data()) != 0) return vec.size();
  size_t missing = 0;
  for (unsigned char v : vec) missing += (v & 1) ? 0 : 1;
  return missing;
}

bool wait_until_full() {
  // The filler runs at idle priority: on a machine busy with other work it
  // gets little CPU, so the bound is generous.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (reserve::ready() < reserve::kHighWater) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Runs first, while no chunk was ever freed: malloc cannot hand back memory
// that some earlier write already faulted in, so only the reserve's own
// touching can make these writes fault-free.
void writes_to_reserved_chunks_do_not_fault() {
  ::operator delete(reserve::take());  // starts the filler
  CHECK(wait_until_full());
  std::vector<void*> chunks;
  for (size_t i = 0; i < reserve::kLowWater; ++i) chunks.push_back(reserve::take());
  // A chunk rarely starts on a page boundary: its 28 KiB span 8 pages, and
  // the last one is the writer's to fault unless the reserve touched it too.
  for (void* c : chunks) CHECK_EQ(pages_not_resident(c, reserve::kChunkBytes), size_t{0});
  const long before = thread_minor_faults();
  for (void* c : chunks) std::memset(c, 0xAB, reserve::kChunkBytes);
  const long faults = thread_minor_faults() - before;
#if !defined(__SANITIZE_THREAD__)  // TSan's shadow memory faults on its own
  // 7 or 8 pages per chunk would fault here without the reserve; allow one stray.
  CHECK(faults <= 1);
#endif
  std::printf("faults writing %zu reserved chunks: %ld\n", chunks.size(), faults);
  for (void* c : chunks) ::operator delete(c);
}

void concurrent_takers_get_distinct_chunks() {
  constexpr int kThreads = 4;
  constexpr int kEach = 200;
  std::vector<std::vector<void*>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &got] {
      for (int i = 0; i < kEach; ++i) {
        void* c = reserve::take();
        // Each taker owns its chunk: a pattern of its own survives.
        std::memset(c, t + 1, reserve::kChunkBytes);
        got[t].push_back(c);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<void*> distinct;
  for (int t = 0; t < kThreads; ++t) {
    for (void* c : got[t]) {
      distinct.insert(c);
      const auto* b = static_cast<const unsigned char*>(c);
      CHECK(b[0] == t + 1 && b[reserve::kChunkBytes - 1] == t + 1);
    }
  }
  CHECK_EQ(distinct.size(), static_cast<size_t>(kThreads * kEach));
  for (auto& v : got) {
    for (void* c : v) ::operator delete(c);
  }
  // The filler refills only once a take leaves fewer than kLowWater ready;
  // the takers may have stopped above that, and then it rightly sleeps.
  // Take below it (which wakes the filler), then it must fill up.
  std::vector<void*> drained;
  while (reserve::ready() >= reserve::kLowWater) drained.push_back(reserve::take());
  for (void* c : drained) ::operator delete(c);
  CHECK(wait_until_full());
}

}  // namespace

int main() {
  CHECK(reserve::enabled());  // on unless HOTSPAN_CHUNK_RESERVE=0
  writes_to_reserved_chunks_do_not_fault();
  concurrent_takers_get_distinct_chunks();
  return check::result("chunk_reserve_test");
}
