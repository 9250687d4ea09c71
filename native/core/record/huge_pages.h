// Large arrays that are about to be filled (a snapshot's records) fault in
// one 2 MiB page at a time instead of 512 small ones, where transparent huge
// pages are available in madvise mode: one fault per 2 MiB instead of per
// 4 KiB (bench/cases/native.mjs bare-fresh vs bare-fresh-thp measures the
// difference).
//
// Such an array gets a mapping of its own, advised MADV_HUGEPAGE and unmapped
// when freed. Advising memory that came from malloc instead would leave the
// flag on the heap after the array is gone (malloc serves large blocks from
// its heap once it has freed one of that size), so the host process's later
// small allocations would land in huge pages.
#pragma once

#include <cstddef>
#include <new>

namespace hotspan {

namespace huge_pages {

constexpr size_t kMinBytes = size_t{8} << 20;  // smaller arrays: operator new

void* allocate(size_t bytes);                     // throws std::bad_alloc
void deallocate(void* p, size_t bytes) noexcept;  // bytes as allocated

}  // namespace huge_pages

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) {
#if defined(__cpp_exceptions)
      throw std::bad_array_new_length();
#else
      __builtin_trap();  // the wasm build has no exceptions (scripts/build-wasm.sh)
#endif
    }
    return static_cast<T*>(huge_pages::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { huge_pages::deallocate(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const noexcept { return false; }
};

}  // namespace hotspan
