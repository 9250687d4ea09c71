// A span as its timeline stores it: 28 bytes, 4 fewer than the SpanRecord a
// snapshot hands out. The end is kept as a 32-bit duration in the timeline's
// unit; a span too long for it (2^32 - 1 units: 4.3 s in ns, 1.4 to 2 s in
// TSC ticks) or ending before it starts (a caller-supplied time) stores
// kLongSpan and leaves its end in the timeline's long-end side table. Those
// are rare, so the side table's lock stays off the common path.
#pragma once

#include <cstdint>

namespace hotspan {

constexpr uint32_t kLongSpan = 0xFFFFFFFFu;

// Records per timeline chunk (28 KiB of StoredSpan).
constexpr uint32_t kChunkRecords = 1024;

// Packed to 4-byte alignment: x86 and arm64 load an unaligned int64 at full
// speed, and the 4 bytes of padding would be an eighth of every record.
struct __attribute__((packed, aligned(4))) StoredSpan {
  int64_t start;
  uint32_t duration;      // end - start, or kLongSpan
  uint32_t local_id;
  uint32_t parent_local;
  uint32_t name;
  uint16_t depth;
  uint16_t flags;
};
static_assert(sizeof(StoredSpan) == 28, "stored records are 28 bytes");

// The end of the record at `index` whose duration did not fit (kLongSpan).
struct LongEnd {
  uint32_t index;
  int64_t end;
};

// Stores one span; false when its end must go to the long-end side table
// (before the record is published).
inline bool store_span(StoredSpan* r, int64_t start, int64_t end, uint32_t local,
                       uint32_t parent_local, uint32_t name, uint16_t depth, uint16_t flags) {
  const uint64_t d = static_cast<uint64_t>(end) - static_cast<uint64_t>(start);
  const bool fits = d < kLongSpan;
  r->start = start;
  r->duration = fits ? static_cast<uint32_t>(d) : kLongSpan;
  r->local_id = local;
  r->parent_local = parent_local;
  r->name = name;
  r->depth = depth;
  r->flags = flags;
  return fits;
}

}  // namespace hotspan
