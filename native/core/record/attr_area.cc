#include "record/attr_area.h"

#include <algorithm>
#include <cstring>

namespace hotspan {

void AttrArea::add_block(size_t size) {
  last_ = &blocks_.emplace_back(size);
  held_ += size;
}

AttrArea::Entry AttrArea::read(const Block& b, size_t off) {
  const char* at = b.data.get() + off;
  Entry e;
  uint32_t delta;
  uint16_t len;
  std::memcpy(&delta, at, 4);
  std::memcpy(&e.local, at + 4, 4);
  std::memcpy(&len, at + 8, 2);
  e.index = b.base + delta;
  e.bytes = std::string_view(at + kHeader, len != kLongEntry ? len : b.size - kHeader);
  return e;
}

size_t AttrArea::drop_below(uint64_t end) {
  size_t freed = 0;
  while (!blocks_.empty()) {
    Block& b = blocks_.front();
    for (const size_t used = b.used.load(std::memory_order_acquire); head_ < used;) {
      const Entry e = read(b, head_);
      if (e.index >= end) return freed;
      head_ += kHeader + e.bytes.size();
    }
    // The writer's block stays (it may be appending now), emptied or not.
    if (blocks_.size() == 1) return freed;
    freed += b.size;
    held_ -= b.size;
    blocks_.pop_front();
    head_ = 0;
  }
  return freed;
}

}  // namespace hotspan
