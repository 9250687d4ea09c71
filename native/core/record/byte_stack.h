// A stack of bytes whose capacity stays: a thread's open spans' attribute
// bytes (thread_state.h). Unlike std::string, making room is a bound check
// and an add (no fill, no call): a binding writes a span's slots straight
// into it with memcpy.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

#include "record/hot_inline.h"

namespace hotspan {

class ByteStack {
 public:
  size_t size() const { return size_; }
  // n more bytes at the top, uninitialized, for the caller to write.
  HOTSPAN_HOT_INLINE char* grow(size_t n) {
    if (HOTSPAN_UNLIKELY(cap_ - size_ < n)) reserve_more(n);
    char* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  void push_back(char c) { *grow(1) = c; }
  void append(std::string_view s) {
    if (!s.empty()) std::memcpy(grow(s.size()), s.data(), s.size());
  }
  // Cuts the stack back to `n` bytes (n <= size()).
  void cut(size_t n) { size_ = n; }
  std::string_view from(size_t at) const { return std::string_view(data_.get() + at, size_ - at); }
  // Byte `at` (< size()), to patch what was written.
  char* at(size_t i) { return data_.get() + i; }

 private:
  HOTSPAN_COLD void reserve_more(size_t n) {
    size_t cap = cap_ < 256 ? 256 : cap_ * 2;
    while (cap - size_ < n) cap *= 2;
    std::unique_ptr<char[]> bigger(new char[cap]);
    if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    cap_ = cap;
  }
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t cap_ = 0;
};

}  // namespace hotspan
