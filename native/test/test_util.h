// Small helpers shared by the engine tests.
#pragma once

#include <cstdint>
#include <string>

#include "tracer.h"

namespace test_util {

inline const hotspan::SnapshotTimeline* find_timeline(const hotspan::Snapshot& s, uint32_t id) {
  for (const auto& tl : s.timelines) {
    if (tl.id == id) return &tl;
  }
  return nullptr;
}

inline size_t committed_on(const hotspan::Snapshot& s, uint32_t id) {
  const auto* tl = find_timeline(s, id);
  return tl ? tl->records.size() : 0;
}

inline const hotspan::SpanRecord* find_local(const hotspan::SnapshotTimeline& tl, uint32_t local) {
  for (const auto& r : tl.records) {
    if (r.local_id == local) return &r;
  }
  return nullptr;
}

inline const std::string* attrs_of(const hotspan::SnapshotTimeline& tl, uint32_t local) {
  for (const auto& a : tl.attrs) {
    if (a.first == local) return &a.second;
  }
  return nullptr;
}

}  // namespace test_util
