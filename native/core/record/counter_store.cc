#include "record/counter_store.h"

#include <cmath>

namespace hotspan {

bool CounterStore::add(std::string_view name, int64_t ns, double value) {
  if (!std::isfinite(value)) return false;
  LockGuard<Mutex> lock(mu_);
  auto it = index_.find(std::string(name));
  if (it == index_.end()) {
    it = index_.emplace(std::string(name), series_.size()).first;
    series_.push_back(CounterSeries{std::string(name), {}, 0});
  }
  CounterSeries& s = series_[it->second];
  if (s.samples.size() >= kMaxSamples) {
    ++s.dropped;
  } else {
    s.samples.push_back(CounterSample{ns, value});
  }
  return true;
}

std::vector<CounterSeries> CounterStore::copy() const {
  LockGuard<Mutex> lock(mu_);
  return series_;
}

}  // namespace hotspan
