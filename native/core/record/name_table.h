// Interned names. Ids are dense from 0 in interning order, so a snapshot's
// name vector is indexed by id with no placeholder. Lives in the tracer's
// shared block: the hot path reads count() to reject unknown ids even after
// the Tracer object is gone.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "record/platform_lock.h"

namespace hotspan {

class NameTable {
 public:
  uint32_t intern(std::string_view name);
  std::string name_of(uint32_t id) const;  // "" when unknown
  std::vector<std::string> all() const;
  // Ids below this exist. Relaxed: ids only ever become valid, and a caller
  // holding an id got it from intern(), which happens-before its use.
  uint32_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  mutable Mutex mu_;
  // deque: elements never move, so the string_view keys stay valid.
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::atomic<uint32_t> count_{0};
};

}  // namespace hotspan
