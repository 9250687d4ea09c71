// local id -> entry of a timeline's (local id, value) side list (attributes,
// foreign parents), for the writers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hotspan {

// Dense when the ids are compact (the normal case), from the lowest one (a
// stream's batch starts far above 0), else sorted + binary search; the last
// entry wins on duplicates in both forms.
template <typename V>
class LocalIndex {
 public:
  LocalIndex(const std::vector<std::pair<uint32_t, V>>& items, size_t records) : items_(items) {
    if (items.empty()) return;
    uint32_t min_id = items[0].first;
    uint32_t max_id = min_id;
    for (const auto& it : items) {
      min_id = std::min(min_id, it.first);
      max_id = std::max(max_id, it.first);
    }
    if (static_cast<size_t>(max_id - min_id) <= 4 * (records + items.size()) + 1024) {
      low_ = min_id;
      dense_.assign(static_cast<size_t>(max_id - min_id) + 1, -1);
      for (size_t i = 0; i < items.size(); ++i) dense_[items[i].first - low_] = static_cast<int64_t>(i);
    } else {
      sorted_.reserve(items.size());
      for (size_t i = 0; i < items.size(); ++i) sorted_.emplace_back(items[i].first, i);
      std::stable_sort(sorted_.begin(), sorted_.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
  }
  const V* find(uint32_t local) const {
    if (items_.empty()) return nullptr;
    if (!dense_.empty()) {
      if (local < low_ || local - low_ >= dense_.size() || dense_[local - low_] < 0) return nullptr;
      return &items_[static_cast<size_t>(dense_[local - low_])].second;
    }
    // Last entry wins on duplicates, as in the dense form.
    auto it = std::upper_bound(sorted_.begin(), sorted_.end(), local,
                               [](uint32_t v, const auto& e) { return v < e.first; });
    if (it == sorted_.begin() || (it - 1)->first != local) return nullptr;
    return &items_[(it - 1)->second].second;
  }

 private:
  const std::vector<std::pair<uint32_t, V>>& items_;
  uint32_t low_ = 0;  // the id of dense_[0]
  std::vector<int64_t> dense_;
  std::vector<std::pair<uint32_t, size_t>> sorted_;
};

}  // namespace hotspan
