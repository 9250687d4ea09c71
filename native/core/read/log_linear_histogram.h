// Log-linear histogram of non-negative int64 nanosecond durations.
//
// Buckets:
//   v < 128            one exact bucket per value (width 1).
//   2^e <= v < 2^(e+1) (e = 7..62) 128 linear sub-buckets of width w = 2^(e-7).
// So every bucket of width w > 1 starts at lo >= 128 * w. The representative
// of a bucket is its midpoint lo + (w - 1) / 2, hence for any value v in it
//   |rep - v| <= (w - 1) / 2 < w / 2 <= v / 256,
// a relative error below 1/256 (0.39%), inside the 1% the stats promise.
// Exact values: count, min, max and total (int64; overflows only past
// 2^63 ns ~ 292 years of summed time). Negative inputs are clamped to 0.
//
// Quantiles use the nearest-rank rule: quantile(q) is the value at rank
// nearest_rank(q, n) = ceil(q * n) clamped to [1, n] (1-based, ascending), so
// q = 0.5 of {1, 2, 3, 4} is 2 (rank 2). The histogram returns the
// representative of the bucket holding that rank, clamped into [min, max]
// (which only moves it closer to the exact value), so for every q:
//   |quantile(q) - exact| <= exact / 256.
// q <= 0 gives min and q >= 1 gives max, both exact. An empty histogram gives 0.
//
// Memory: counters are allocated per octave (128 x u64 = 1 KiB) on first use,
// so a histogram costs ~0.5 KiB plus 1 KiB per power of two actually hit
// (at most 57 KiB).
#pragma once

#include <cstdint>
#include <memory>
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

namespace hotspan {

class LogLinearHistogram {
 public:
  static constexpr int kSubBits = 7;
  static constexpr int kSub = 1 << kSubBits;  // 128 linear sub-buckets per octave
  // Page 0: exact values 0..127. Page p >= 1: octave e = p + 6 (e = 7..62).
  static constexpr int kPages = 63 - kSubBits + 1;  // 57

  LogLinearHistogram() = default;
  LogLinearHistogram(const LogLinearHistogram& other);
  LogLinearHistogram& operator=(const LogLinearHistogram& other);
  LogLinearHistogram(LogLinearHistogram&&) noexcept = default;
  LogLinearHistogram& operator=(LogLinearHistogram&&) noexcept = default;

  void record(int64_t v) {
    if (v < 0) v = 0;
    if (count_ == 0) {
      min_ = max_ = v;
    } else {
      if (v < min_) min_ = v;
      if (v > max_) max_ = v;
    }
    ++count_;
    total_ += v;
    int page, sub;
    locate(v, page, sub);
    uint64_t* p = pages_[page].get();
    if (!p) p = alloc_page(page);
    ++p[sub];
    ++page_counts_[page];
  }

  uint64_t count() const { return count_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  int64_t total() const { return total_; }
  double mean() const { return count_ ? static_cast<double>(total_) / static_cast<double>(count_) : 0.0; }

  // Nearest-rank quantile, see above.
  double quantile(double q) const;

  // 1-based rank of the nearest-rank q-quantile among n values (n > 0):
  // ceil(q * n) clamped to [1, n]. A tiny tolerance absorbs floating-point
  // noise where q * n is mathematically an integer (0.9 * 10 must be 9).
  static uint64_t nearest_rank(double q, uint64_t n);

  static int floor_log2(uint64_t u) {  // u > 0
#if defined(_MSC_VER) && !defined(__clang__)
    unsigned long idx;
    _BitScanReverse64(&idx, u);
    return static_cast<int>(idx);
#else
    return 63 - __builtin_clzll(u);
#endif
  }

  // Bucket geometry (exposed for tests): the bucket of v and its bounds.
  static void locate(int64_t v, int& page, int& sub) {
    uint64_t u = static_cast<uint64_t>(v);
    if (u < static_cast<uint64_t>(kSub)) {
      page = 0;
      sub = static_cast<int>(u);
      return;
    }
    int e = floor_log2(u);  // 7..62
    page = e - (kSubBits - 1);
    sub = static_cast<int>((u >> (e - kSubBits)) - kSub);
  }
  static int64_t bucket_low(int page, int sub) {
    if (page == 0) return sub;
    int e = page + kSubBits - 1;
    return static_cast<int64_t>(static_cast<uint64_t>(kSub + sub) << (e - kSubBits));
  }
  static int64_t bucket_width(int page) {
    if (page == 0) return 1;
    return int64_t{1} << (page - 1);  // 2^(e-7) with e = page + 6
  }
  // The midpoint a bucket reports.
  static double representative(int page, int sub) {
    return static_cast<double>(bucket_low(page, sub)) +
           static_cast<double>(bucket_width(page) - 1) / 2.0;
  }

 private:
  uint64_t* alloc_page(int page);

  uint64_t count_ = 0;
  int64_t min_ = 0, max_ = 0, total_ = 0;
  uint64_t page_counts_[kPages] = {};
  std::unique_ptr<uint64_t[]> pages_[kPages];
};

}  // namespace hotspan
