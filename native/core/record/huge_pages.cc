#include "record/huge_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace hotspan::huge_pages {

#if defined(__linux__)

void* allocate(size_t bytes) {
  if (bytes < kMinBytes) return ::operator new(bytes);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  // Only the 2 MiB-aligned interior can be backed by huge pages.
  constexpr uintptr_t kHuge = uintptr_t{1} << 21;
  const auto b = reinterpret_cast<uintptr_t>(p);
  const uintptr_t lo = (b + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t hi = (b + bytes) & ~(kHuge - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // advice only
#endif
  return p;
}

void deallocate(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kMinBytes) {
    ::operator delete(p);
    return;
  }
  munmap(p, bytes);
}

#else

void* allocate(size_t bytes) { return ::operator new(bytes); }
void deallocate(void* p, size_t) noexcept { ::operator delete(p); }

#endif

}  // namespace hotspan::huge_pages
