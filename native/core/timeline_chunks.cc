#include "timeline_chunks.h"

#include <algorithm>
#include <mutex>
#include <utility>

namespace hotspan {

Timeline::Timeline(uint32_t id, TimelineKind kind, std::string name, bool serial)
    : id_(id), kind_(kind), serial_(serial), name_(std::move(name)) {
  chunks_.reserve(16);
}

Timeline::~Timeline() = default;

SpanRecord* Timeline::append_chunk() {
  // Allocated outside the lock: a reader copying a snapshot waits only for
  // the push_back.
  std::unique_ptr<Chunk> chunk(new Chunk);  // default-init: no 32 KiB memset
  SpanRecord* first = chunk->records;
  std::lock_guard<TimelineMutex> lock(mu_);
  chunks_.push_back(std::move(chunk));
  return first;
}

void Timeline::add_attrs(uint32_t index, uint32_t local, std::string json) {
  std::lock_guard<TimelineMutex> lock(mu_);
  attrs_.push_back(AttrEntry{index, local, std::move(json)});
}

void Timeline::add_foreign_parent(uint32_t index, uint32_t local, uint64_t parent_span) {
  std::lock_guard<TimelineMutex> lock(mu_);
  foreign_.push_back(ForeignEntry{index, local, parent_span});
}

void Timeline::commit_up_to(uint32_t w) {
  uint32_t cur = committed_.load(std::memory_order_relaxed);
  while (cur < w &&
         !committed_.compare_exchange_weak(cur, w, std::memory_order_release,
                                           std::memory_order_relaxed)) {
  }
}

void Timeline::set_name(std::string name) {
  std::lock_guard<TimelineMutex> lock(mu_);
  name_ = std::move(name);
}

void Timeline::mark_exited() {
  std::lock_guard<TimelineMutex> lock(mu_);
  exited_ = true;
}

void Timeline::copy_committed(SnapshotTimeline& out) const {
  std::lock_guard<TimelineMutex> lock(mu_);
  // Acquire pairs with the committer's release: the records below it (and
  // the side-table entries added before them) are complete.
  const uint32_t n = committed_.load(std::memory_order_acquire);
  out.id = id_;
  out.kind = kind_;
  out.serial = serial_;
  out.name = name_;
  out.exited = exited_;
  out.records.clear();
  out.records.reserve(n);
  for (size_t c = 0; out.records.size() < n && c < chunks_.size(); ++c) {
    const size_t take = std::min<size_t>(kChunkRecords, n - out.records.size());
    out.records.insert(out.records.end(), chunks_[c]->records, chunks_[c]->records + take);
  }
  out.attrs.clear();
  for (const AttrEntry& a : attrs_) {
    if (a.index >= n) break;  // entries are in index order
    out.attrs.emplace_back(a.local, a.json);
  }
  out.foreign_parents.clear();
  for (const ForeignEntry& f : foreign_) {
    if (f.index >= n) break;
    out.foreign_parents.emplace_back(f.local, f.parent);
  }
}

}  // namespace hotspan
