// UTF-8 validation for the writers, which must emit text a consumer decodes
// exactly as V8 / TextDecoder would.
#pragma once

#include <cstddef>

namespace hotspan {

// Length of the valid UTF-8 sequence at b[i] (i < n), or 0 when it is not
// valid; then *bad is the length of its maximal subpart, which decoders
// replace by one U+FFFD (the WHATWG / Unicode practice). Overlongs,
// surrogates and code points past U+10FFFF are invalid.
inline size_t utf8_seq(const unsigned char* b, size_t n, size_t i, size_t* bad) {
  const unsigned c = b[i];
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  }
  size_t good = 0;
  if (len != 0) {
    good = 1;
    if (i + 1 < n && b[i + 1] >= lo && b[i + 1] <= hi) {
      good = 2;
      while (good < len && i + good < n && (b[i + good] & 0xC0) == 0x80) ++good;
    }
  }
  if (len != 0 && good == len) return len;
  *bad = good ? good : 1;
  return 0;
}

}  // namespace hotspan
