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
constexpr size_t kMax = size_t{64} << 30;      // a kept window then fits 32-bit record indices
constexpr size_t kDefault = size_t{256} << 20;  // about 9.5M spans
}  // namespace memory_limit

}  // namespace hotspan
