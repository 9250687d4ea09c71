// One batch of CPU samples of one thread, as V8's CPU profiler gives them
// (node:inspector's Profiler.stop): the distinct frames, the call tree over
// them, and per sample the tree node on top of the stack and its time.
// Sample times are CLOCK_MONOTONIC ns, the axis span records are read on
// (V8's profile times are that clock's us). CpuProfileStore
// (cpu_profile_store.h) keeps them; the writers emit them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hotspan {

struct CpuFrame {
  std::string function;  // "" for an anonymous function; V8's "(root)", "(idle)", ...
  std::string url;       // the script's URL; "" for native and V8's own entries
  int32_t line = -1;     // 0-based, as V8 gives it; -1 unknown
  int32_t column = -1;   // 0-based; -1 unknown
};

// One key per distinct frame (function, url, line, column), for the writers
// that intern frames.
inline std::string cpu_frame_key(const CpuFrame& f) {
  std::string k = f.function;
  k.push_back('\0');
  k += f.url;
  k.push_back('\0');
  k += std::to_string(f.line);
  k.push_back(':');
  k += std::to_string(f.column);
  return k;
}

struct CpuProfile {
  uint32_t timeline = 0;  // the id of the sampled thread's timeline
  std::vector<CpuFrame> frames;
  // Per node: its frame, and its parent node (-1 for a root). A parent
  // comes before its children, so the tree has no cycle.
  std::vector<uint32_t> node_frame;
  std::vector<int32_t> node_parent;
  // Per sample: the node on top of the stack, and when it was taken.
  std::vector<uint32_t> sample_node;
  std::vector<int64_t> sample_ns;

  // True when the tables are consistent: indices in range, parents first,
  // as many times as samples.
  bool valid() const;
  // What it holds in memory, for the store's budget.
  size_t bytes() const;
};

}  // namespace hotspan
