// libc++ 16 (the wasm32 build's) has std::from_chars for integers only; the
// Perfetto writer parses attribute numbers with the double overload. This
// supplies it, force-included in the wasm build only (scripts/build-wasm.sh),
// with from_chars' contract: correctly rounded (wasi-libc's strtod, C locale
// only), result_out_of_range and `value` untouched when the number overflows
// to infinity or underflows to zero.
#pragma once

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>
#include <system_error>

namespace std {

inline from_chars_result from_chars(const char* first, const char* last, double& value,
                                    chars_format = chars_format::general) {
  const std::string text(first, last);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  const auto used = static_cast<size_t>(end - text.c_str());
  if (used == 0) return {first, errc::invalid_argument};
  if (errno == ERANGE && (v == 0 || v == HUGE_VAL || v == -HUGE_VAL)) {
    return {first + used, errc::result_out_of_range};
  }
  value = v;
  return {first + used, errc{}};
}

}  // namespace std
