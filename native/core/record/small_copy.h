// Short copies inline: the keys, values and attribute entries of common
// spans are a few to a few dozen bytes, where a libc memcpy call (and the
// spills around it) costs more than the copy itself.
#pragma once

#include <cstddef>
#include <cstring>

#include "record/hot_inline.h"

namespace hotspan {

// n bytes from `src` to `dst` (not overlapping): straight-line overlapping
// stores up to 64 bytes, memcpy beyond.
HOTSPAN_HOT_INLINE void copy_small(char* dst, const char* src, size_t n) {
  if (n >= 16 && n <= 64) {
    std::memcpy(dst, src, 16);
    if (n > 32) {
      std::memcpy(dst + 16, src + 16, 16);
      if (n > 48) std::memcpy(dst + 32, src + 32, 16);
    }
    std::memcpy(dst + n - 16, src + n - 16, 16);
  } else if (n >= 8 && n < 16) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    std::memcpy(dst, src, n);
  }
}

}  // namespace hotspan
