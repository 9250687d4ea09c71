// A tracer's counter series as they are recorded. Samples are rare next to
// spans (one per sampling interval), so each takes a lock; any thread may add.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "record/counter_series.h"
#include "record/platform_lock.h"

namespace hotspan {

class CounterStore {
 public:
  // Samples kept per series; later ones are counted in `dropped`. Bounds
  // memory at 16 MiB a series.
  static constexpr size_t kMaxSamples = size_t{1} << 20;

  // False (and nothing stored) for a value that is not finite; a sample
  // past kMaxSamples is counted as dropped and returns true.
  bool add(std::string_view name, int64_t ns, double value);
  // Every series, in order of first use.
  std::vector<CounterSeries> copy() const;

 private:
  mutable Mutex mu_;
  std::vector<CounterSeries> series_;
  std::unordered_map<std::string, size_t> index_;  // name -> series_ slot
};

}  // namespace hotspan
