#include "record/attr_dict.h"

#include <cstring>
#include <utility>

#include "record/chunk_pool.h"

namespace hotspan {

namespace {

// Heap bytes an entry costs past its text, held twice (the list, the map's
// key): the map node and the strings' headers, as an estimate.
constexpr size_t kEntryOverhead = 96;

void put_u32(std::string& out, size_t v) {
  const auto n = static_cast<uint32_t>(v);
  out.append(reinterpret_cast<const char*>(&n), 4);
}

}  // namespace

AttrDict::AttrDict(std::shared_ptr<ChunkPool> pool) : pool_(std::move(pool)) {}

AttrDict::~AttrDict() {
  if (charged_ != 0) pool_->uncharge(charged_);
}

size_t AttrDict::charged() const {
  LockGuard<Mutex> lock(mu_);
  return charged_;
}

bool AttrDict::charge_locked(size_t bytes) {
  if (bytes_ + bytes > kMaxBytes || !pool_->charge(bytes, true)) return false;
  bytes_ += bytes;
  charged_ += bytes;
  return true;
}

uint32_t AttrDict::add_shape(const std::string_view* keys, uint32_t n) {
  if (n == 0 || n > attr_slots::kMaxSlots) return kNone;
  std::string whole;
  for (uint32_t i = 0; i < n; ++i) {
    put_u32(whole, keys[i].size());
    whole.append(keys[i]);
  }
  LockGuard<Mutex> lock(mu_);
  if (auto it = shape_ids_.find(whole); it != shape_ids_.end()) return it->second;
  const uint32_t id = shapes_.count();
  const size_t seg = id % kSegment == 0 ? kSegment * sizeof(Shape) : 0;
  if (id >= kMaxShapes || !charge_locked(2 * whole.size() + kEntryOverhead + seg)) return kNone;
  Shape s;
  s.slots = n;
  for (uint32_t i = 0; i < n; ++i) s.keys[i] = std::string(keys[i]);
  shapes_.push(std::move(s));
  shape_ids_.emplace(std::move(whole), id);
  return id;
}

uint32_t AttrDict::add_value(std::string_view text) {
  std::string key(text);
  LockGuard<Mutex> lock(mu_);
  if (auto it = value_ids_.find(key); it != value_ids_.end()) return it->second;
  const uint32_t id = values_.count();
  const size_t seg = id % kSegment == 0 ? kSegment * sizeof(std::string) : 0;
  if (id >= kMaxValues || !charge_locked(2 * text.size() + kEntryOverhead + seg)) return kNone;
  values_.push(key);
  value_ids_.emplace(std::move(key), id);
  return id;
}

}  // namespace hotspan
