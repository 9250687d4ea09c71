// A timeline's attribute bytes: one append-only area of blocks, each entry
// (record index, local id, length, then the bytes as the writer gave them:
// attr_slots or JSON text) laid out in place, so storing a span's attributes
// allocates nothing per span. The header is 10 bytes, not 16: the index as
// its distance from the block's first (an entry farther than a u32 from it
// opens a new block), the length as a u16 (only an entry with a block of its
// own may be longer: kLongEntry, its length is the block's). Blocks are charged to the budget whole, by the
// timeline, when one opens; entries leave from the front in record order as
// their chunks are recycled, and an emptied block is given back (the last
// one once a newer exists).
//
// Threads: the timeline's one writer at a time appends to the last block
// without a lock (need, append: it alone moves `used`, with a release
// store); everything else (add_block, drop_below, each_between, held) runs
// under the timeline's mutex. A reader reads entries below the block's
// `used` (acquire), so only whole entries, and the timeline hands out only
// those below its committed count, stored before it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string_view>

#include "record/chunk_reserve.h"
#include "record/small_copy.h"

namespace hotspan {

class AttrArea {
 public:
  // A block is a reserve chunk (chunk_reserve.h), its pages already faulted
  // in: the recording thread does not fault once per 4 KiB of attributes.
  static constexpr size_t kBlockBytes = chunk_reserve::kChunkBytes;
  static constexpr size_t kHeader = 10;  // index - block base u32, local u32, length u16
  static constexpr uint16_t kLongEntry = 0xFFFF;  // length: the rest of its own block

  struct Entry {
    uint64_t index;
    uint32_t local;
    std::string_view bytes;
  };

  // Writer: bytes a new block must have for entry `index` of n bytes; 0
  // when it fits the last one. Inline, as append: every span with attributes
  // calls both.
  size_t need(uint64_t index, size_t n) const {
    if (last_ != nullptr && last_->size - last_->used.load(std::memory_order_relaxed) >= kHeader + n &&
        index - last_->base <= UINT32_MAX)
      return 0;
    return n + kHeader > kBlockBytes ? n + kHeader : kBlockBytes;
  }
  // Opens a block of `size` (from need(), already charged).
  void add_block(size_t size);
  // Writer: stores an entry; need() answered 0 or a block of that size was added.
  void append(uint64_t index, uint32_t local, const char* p, size_t n) {
    Block& b = *last_;
    const size_t used = b.used.load(std::memory_order_relaxed);
    if (used == 0) b.base = index;  // published with the entry
    char* at = b.data.get() + used;
    const auto delta = static_cast<uint32_t>(index - b.base);
    const auto len = static_cast<uint16_t>(n < kLongEntry ? n : kLongEntry);
    std::memcpy(at, &delta, 4);
    std::memcpy(at + 4, &local, 4);
    std::memcpy(at + 8, &len, 2);
    copy_small(at + kHeader, p, n);
    b.used.store(used + kHeader + n, std::memory_order_release);
  }
  // Drops the entries with index below `end`; returns the bytes of the
  // blocks given back (to uncharge).
  size_t drop_below(uint64_t end);
  // Bytes of every block held (to uncharge at the end).
  size_t held() const { return held_; }

  // Calls fn(Entry) for the entries with index in [begin, end), oldest first.
  // A block whose successor begins at or below `begin` holds nothing in range
  // and is skipped whole: a consumer's batch (begin > 0) does not walk every
  // entry the timeline still keeps.
  template <class Fn>
  void each_between(uint64_t begin, uint64_t end, Fn&& fn) const {
    size_t off = head_;
    for (size_t k = 0; k < blocks_.size(); ++k, off = 0) {
      if (k + 1 < blocks_.size() && blocks_[k + 1].used.load(std::memory_order_acquire) != 0 &&
          read(blocks_[k + 1], 0).index <= begin)
        continue;
      const Block& b = blocks_[k];
      for (const size_t used = b.used.load(std::memory_order_acquire); off < used;) {
        const Entry e = read(b, off);
        if (e.index >= end) return;
        if (e.index >= begin) fn(e);
        off += kHeader + e.bytes.size();
      }
    }
  }

 private:
  struct Free {
    void operator()(char* p) const { ::operator delete(p); }
  };
  struct Block {
    explicit Block(size_t n)
        : data(static_cast<char*>(n == kBlockBytes ? chunk_reserve::take() : ::operator new(n))), size(n) {}
    const std::unique_ptr<char, Free> data;
    const size_t size;
    std::atomic<size_t> used{0};
    uint64_t base = 0;  // index of its first entry, set before the release store of `used`
  };
  static Entry read(const Block& b, size_t off);

  std::deque<Block> blocks_;  // a deque: blocks never move
  Block* last_ = nullptr;     // blocks_.back(), for the writer
  size_t head_ = 0;  // offset of the oldest entry in blocks_.front()
  size_t held_ = 0;
};

}  // namespace hotspan
