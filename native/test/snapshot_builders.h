// Hand-built snapshot pieces for the writer tests (no engine involved).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "write/block_sink.h"
#include "record/clock_readings.h"
#include "record/tracer.h"

namespace hotspan_test {

// Fixed clock readings for the writers (documents stay byte-identical).
inline const hotspan::ClockReadings kTestClocks{864000000000000, 1767225600000000000, 864500000000000};


inline hotspan::SpanRecord rec(uint32_t local, uint32_t parent, uint32_t name, int64_t start,
                               int64_t end, uint16_t depth = 0, uint16_t flags = 0) {
  hotspan::SpanRecord r{};
  r.start_ns = start;
  r.end_ns = end;
  r.local_id = local;
  r.parent_local = parent;
  r.name = name;
  r.depth = depth;
  r.flags = flags;
  return r;
}

inline hotspan::SnapshotTimeline timeline(uint32_t id, std::string name, hotspan::TimelineKind kind) {
  hotspan::SnapshotTimeline t;
  t.id = id;
  t.name = std::move(name);
  t.kind = kind;
  return t;
}

// A sink that keeps the blocks it is given.
class Collect : public hotspan::BlockSink {
 public:
  explicit Collect(size_t block) : BlockSink(block) {}
  void take(const char* data, size_t n) override { blocks.emplace_back(data, n); }
  std::string joined() const {
    std::string all;
    for (const auto& b : blocks) all += b;
    return all;
  }
  std::vector<std::string> blocks;
};

}  // namespace hotspan_test
