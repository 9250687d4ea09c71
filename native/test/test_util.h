// Small helpers shared by the engine tests.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "record/tracer.h"

namespace test_util {

// A tracer whose W3C ids derive from `salt` (TracerOptions::id_salt).
inline std::shared_ptr<hotspan::Tracer> salted(uint64_t salt) {
  hotspan::TracerOptions o;
  o.id_salt = salt;
  return hotspan::Tracer::create(o);
}

// One timeline's counts from Tracer::counts() (zeros when it has none).
inline hotspan::RecordCounts counts_of(const hotspan::Tracer& t, uint32_t id) {
  for (const hotspan::TimelineCounts& c : t.counts()) {
    if (c.id == id) return c.counts;
  }
  return {};
}

// Over a Snapshot (materialized records) or a FrozenSnapshot (Tracer::freeze).
template <typename Snap>
const auto* find_timeline(const Snap& s, uint32_t id) {
  for (const auto& tl : s.timelines) {
    if (tl.id == id) return &tl;
  }
  return static_cast<decltype(&s.timelines[0])>(nullptr);
}

template <typename Snap>
size_t committed_on(const Snap& s, uint32_t id) {
  const auto* tl = find_timeline(s, id);
  return tl ? tl->records.size() : 0;
}

// The record with that local id (a copy: frozen records are read in place).
template <typename Timeline>
std::optional<hotspan::SpanRecord> find_local(const Timeline& tl, uint32_t local) {
  for (const hotspan::SpanRecord r : tl.records) {
    if (r.local_id == local) return r;
  }
  return std::nullopt;
}

// The tracer's committed records, copied out of freeze(): for the tests of
// what takes materialized SpanRecord arrays (the writers' other overloads).
inline hotspan::Snapshot materialize(hotspan::FrozenSnapshot frozen) {
  hotspan::Snapshot snap;
  snap.names = std::move(frozen.names);
  snap.timelines.resize(frozen.timelines.size());
  for (size_t i = 0; i < frozen.timelines.size(); ++i) {
    hotspan::FrozenTimeline& from = frozen.timelines[i];
    hotspan::SnapshotTimeline& to = snap.timelines[i];
    to.id = from.id;
    to.name = std::move(from.name);
    to.kind = from.kind;
    to.serial = from.serial;
    to.exited = from.exited;
    from.records.materialize(to.records);
    to.attrs = std::move(from.attrs);
    to.foreign_parents = std::move(from.foreign_parents);
    to.counts = from.counts;
  }
  return snap;
}

template <typename Timeline>
const std::string* attrs_of(const Timeline& tl, uint32_t local) {
  for (const auto& a : tl.attrs) {
    if (a.first == local) return &a.second;
  }
  return nullptr;
}

}  // namespace test_util
