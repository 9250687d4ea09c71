#include "record/name_table.h"

namespace hotspan {

uint32_t NameTable::intern(std::string_view name) {
  LockGuard<Mutex> lock(mu_);
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(std::string_view(names_.back()), id);
  count_.store(id + 1, std::memory_order_relaxed);
  return id;
}

std::string NameTable::name_of(uint32_t id) const {
  LockGuard<Mutex> lock(mu_);
  return id < names_.size() ? names_[id] : std::string();
}

std::vector<std::string> NameTable::all() const {
  LockGuard<Mutex> lock(mu_);
  return std::vector<std::string>(names_.begin(), names_.end());
}

}  // namespace hotspan
