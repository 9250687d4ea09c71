// A tracer's dictionary of attribute shapes (their keys) and interned string
// values, which the compact stored form of attributes refers to by id
// (attr_slots.h): a span of a known shape stores its kinds and values, not
// its keys and repeated strings, so its side data is a few bytes.
//
// Tracer-owned (TracerShared): every binding and env of the tracer adds to
// it, deduplicated, and every timeline's freeze reads it. Append-only and
// bounded (kMaxShapes, kMaxValues, kMaxBytes), each entry charged to the
// tracer's budget. Full or refused: kNone, and the writer stores the full
// form instead (bigger, nothing lost).
//
// Threads: adds take the dictionary's mutex (then, to charge, the pool's; no
// one takes this mutex under a pool or timeline mutex). An entry is written
// before the release store of its count and never moves (segments are
// allocated once and kept), so a reader (freeze, under its timeline's
// mutex) reads any id below the count it acquired without a lock.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "record/attr_slots.h"
#include "record/platform_lock.h"

namespace hotspan {

class ChunkPool;

class AttrDict {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kMaxShapes = 4096;    // ids fit the compact form's u16
  static constexpr uint32_t kMaxValues = 1 << 16;
  static constexpr size_t kMaxBytes = 4 << 20;    // bytes charged, all entries
  static constexpr uint32_t kSegment = 256;       // entries per allocation

  struct Shape {
    uint32_t slots = 0;
    std::array<std::string, attr_slots::kMaxSlots> keys;  // UTF-8
  };

  explicit AttrDict(std::shared_ptr<ChunkPool> pool);
  ~AttrDict();
  AttrDict(const AttrDict&) = delete;
  AttrDict& operator=(const AttrDict&) = delete;

  // Any thread: the id of the shape with these keys (UTF-8, 1 to kMaxSlots
  // of them) or of the interned value (UTF-8), added if new; kNone when the
  // dictionary or the budget is full.
  uint32_t add_shape(const std::string_view* keys, uint32_t n);
  uint32_t add_value(std::string_view text);

  // Readers: ids below these counts are readable.
  uint32_t shapes() const { return shapes_.count(); }
  uint32_t values() const { return values_.count(); }
  const Shape& shape(uint32_t id) const { return shapes_.at(id); }
  std::string_view value(uint32_t id) const { return values_.at(id); }
  // Bytes charged to the budget (tests).
  size_t charged() const;

 private:
  // Entries in segments that never move: a reader below count() needs no lock.
  template <class T, uint32_t kMax>
  class List {
   public:
    uint32_t count() const { return count_.load(std::memory_order_acquire); }
    const T& at(uint32_t id) const { return segs_[id / kSeg][id % kSeg]; }
    // Under the dictionary's mutex, count() < kMax.
    uint32_t push(T v) {
      const uint32_t id = count_.load(std::memory_order_relaxed);
      if (!segs_[id / kSeg]) segs_[id / kSeg].reset(new T[kSeg]);
      segs_[id / kSeg][id % kSeg] = std::move(v);
      count_.store(id + 1, std::memory_order_release);
      return id;
    }

   private:
    static constexpr uint32_t kSeg = kSegment;
    std::array<std::unique_ptr<T[]>, (kMax + kSeg - 1) / kSeg> segs_;
    std::atomic<uint32_t> count_{0};
  };

  // Under mu_: charges `bytes` for a new entry; false when a bound or the budget refuses.
  bool charge_locked(size_t bytes);

  const std::shared_ptr<ChunkPool> pool_;
  mutable Mutex mu_;
  List<Shape, kMaxShapes> shapes_;
  List<std::string, kMaxValues> values_;
  std::unordered_map<std::string, uint32_t> shape_ids_;  // key: the keys, each length-prefixed
  std::unordered_map<std::string, uint32_t> value_ids_;
  size_t bytes_ = 0;    // against kMaxBytes
  size_t charged_ = 0;  // to the pool
};

}  // namespace hotspan
