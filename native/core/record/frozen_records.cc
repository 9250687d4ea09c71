#include "record/frozen_records.h"

#include <algorithm>

namespace hotspan {

int64_t FrozenRecords::long_end(const StoredSpan& s, uint32_t i) const {
  auto it = std::lower_bound(long_ends_.begin(), long_ends_.end(), i,
                             [](const LongEnd& e, uint32_t index) { return e.index < index; });
  // Every kLongSpan record got its entry before it was published.
  return it != long_ends_.end() && it->index == i ? it->end : s.start;
}

void FrozenRecords::materialize(SpanRecords& out) const {
  out.clear();
  out.reserve(n_);
  for (uint32_t i = 0; i < n_; ++i) out.push_back((*this)[i]);
}

}  // namespace hotspan
