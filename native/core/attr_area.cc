#include "attr_area.h"

#include <algorithm>
#include <cstring>

namespace hotspan {

size_t AttrArea::need(size_t n) const {
  if (!blocks_.empty() && blocks_.back().size - blocks_.back().used >= kHeader + n) return 0;
  return std::max(kBlockBytes, kHeader + n);
}

void AttrArea::add_block(size_t size) {
  Block b;
  b.data.reset(new char[size]);
  b.size = size;
  blocks_.push_back(std::move(b));
  held_ += size;
}

void AttrArea::append(uint64_t index, uint32_t local, const char* p, size_t n) {
  Block& b = blocks_.back();
  char* at = b.data.get() + b.used;
  const auto len = static_cast<uint32_t>(n);
  std::memcpy(at, &index, 8);
  std::memcpy(at + 8, &local, 4);
  std::memcpy(at + 12, &len, 4);
  if (n != 0) std::memcpy(at + kHeader, p, n);
  b.used += kHeader + n;
}

AttrArea::Entry AttrArea::read(const Block& b, size_t off) {
  const char* at = b.data.get() + off;
  Entry e;
  uint32_t len;
  std::memcpy(&e.index, at, 8);
  std::memcpy(&e.local, at + 8, 4);
  std::memcpy(&len, at + 12, 4);
  e.bytes = std::string_view(at + kHeader, len);
  return e;
}

size_t AttrArea::drop_below(uint64_t end) {
  size_t freed = 0;
  while (!blocks_.empty()) {
    Block& b = blocks_.front();
    while (head_ < b.used) {
      const Entry e = read(b, head_);
      if (e.index >= end) return freed;
      head_ += kHeader + e.bytes.size();
    }
    if (blocks_.size() == 1) {
      // The only block, emptied: reused from its start.
      b.used = 0;
      head_ = 0;
      return freed;
    }
    freed += b.size;
    held_ -= b.size;
    blocks_.pop_front();
    head_ = 0;
  }
  return freed;
}

}  // namespace hotspan
