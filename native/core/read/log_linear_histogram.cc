#include "read/log_linear_histogram.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hotspan {

LogLinearHistogram::LogLinearHistogram(const LogLinearHistogram& other) { *this = other; }

LogLinearHistogram& LogLinearHistogram::operator=(const LogLinearHistogram& other) {
  if (this == &other) return *this;
  count_ = other.count_;
  min_ = other.min_;
  max_ = other.max_;
  total_ = other.total_;
  std::memcpy(page_counts_, other.page_counts_, sizeof page_counts_);
  for (int p = 0; p < kPages; ++p) {
    if (other.pages_[p]) {
      pages_[p].reset(new uint64_t[kSub]);
      std::memcpy(pages_[p].get(), other.pages_[p].get(), sizeof(uint64_t) * kSub);
    } else {
      pages_[p].reset();
    }
  }
  return *this;
}

uint64_t* LogLinearHistogram::alloc_page(int page) {
  pages_[page].reset(new uint64_t[kSub]());
  return pages_[page].get();
}

uint64_t LogLinearHistogram::nearest_rank(double q, uint64_t n) {
  if (n == 0) return 0;
  if (!(q > 0)) return 1;  // also NaN
  if (q >= 1) return n;
  double r = q * static_cast<double>(n);
  // Relative tolerance: q*n computed as 9.000000000000002 must round to 9.
  double rank = std::ceil(r - r * 1e-12);
  if (rank < 1) return 1;
  if (rank >= static_cast<double>(n)) return n;
  return static_cast<uint64_t>(rank);
}

double LogLinearHistogram::quantile(double q) const {
  if (count_ == 0) return 0.0;
  uint64_t rank = nearest_rank(q, count_);
  // The extremes are known exactly.
  if (rank == 1) return static_cast<double>(min_);
  if (rank == count_) return static_cast<double>(max_);
  uint64_t seen = 0;
  for (int p = 0; p < kPages; ++p) {
    if (seen + page_counts_[p] < rank) {
      seen += page_counts_[p];
      continue;
    }
    const uint64_t* c = pages_[p].get();
    for (int s = 0; s < kSub; ++s) {
      seen += c[s];
      if (seen >= rank) {
        double rep = representative(p, s);
        return std::min(std::max(rep, static_cast<double>(min_)), static_cast<double>(max_));
      }
    }
  }
  return static_cast<double>(max_);  // unreachable: counts add up to count_
}

}  // namespace hotspan
