// Reads a fuzz input as a stream of small decisions. Past the end every read
// returns zeros, so any input is a complete program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hotspan_fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : p_(data), n_(size) {}

  bool empty() const { return i_ >= n_; }
  uint8_t byte() { return i_ < n_ ? p_[i_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = v << 8 | byte();
    return v;
  }
  // A string of up to `max` bytes, its length taken from one byte.
  std::string str(size_t max = 255) {
    size_t len = byte() % (max + 1);
    if (len > n_ - (i_ < n_ ? i_ : n_)) len = n_ - (i_ < n_ ? i_ : n_);
    std::string s(reinterpret_cast<const char*>(p_ + i_), len);
    i_ += len;
    return s;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t i_ = 0;
};

}  // namespace hotspan_fuzz
