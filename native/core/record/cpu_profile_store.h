// A tracer's CPU profiles as they are added (Tracer::cpu_profile): batches of
// V8 samples, rare next to spans (one per profile stop), so each takes a lock.
// Bounded: the profiles together hold at most a quarter of the tracer's
// memory budget; samples past it are refused and counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "record/cpu_profile.h"
#include "record/platform_lock.h"

namespace hotspan {

class CpuProfileStore {
 public:
  explicit CpuProfileStore(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Keeps `profile`, or as many of its first samples as fit; the samples
  // left out are counted in dropped(). False (nothing kept or counted) when
  // the profile is not valid().
  bool add(CpuProfile profile);
  // Every kept profile, in the order they were added (shared, not copied).
  std::vector<std::shared_ptr<const CpuProfile>> copy() const;
  uint64_t dropped() const;
  size_t bytes() const;

 private:
  const size_t max_bytes_;
  mutable Mutex mu_;
  std::vector<std::shared_ptr<const CpuProfile>> profiles_;
  size_t bytes_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace hotspan
