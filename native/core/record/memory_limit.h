// A tracer's memory budget as its options give it: the limit's bounds and
// default, and the policy when it is full (chunk_pool.h applies them).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hotspan {

enum class FullPolicy : uint8_t {
  kOverwrite = 0,  // recycle the oldest committed chunks (flight recorder)
  kDrop = 1,       // drop new records
};

namespace memory_limit {
constexpr size_t kMin = size_t{1} << 20;       // 37 chunks
// A kept window then fits 32-bit record indices. Where size_t is 32 bits (the
// WebAssembly build) 64 GiB would wrap to 0 and refuse every chunk: there,
// 3 GiB, below wasm32's 4 GiB of memory.
constexpr size_t kMax = sizeof(size_t) >= 8 ? static_cast<size_t>(uint64_t{64} << 30) : size_t{3} << 30;
static_assert(kMax > kMin, "the budget's bounds");
constexpr size_t kDefault = size_t{256} << 20;  // about 9.5M spans
}  // namespace memory_limit

}  // namespace hotspan
