// A minimal assertion helper for the native tests (no framework download).
// CHECK / CHECK_EQ print file:line and the values and mark the test failed;
// the test's main returns check::result() so ctest sees a non-zero exit.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <type_traits>

namespace check {

inline std::atomic<int>& failures() {
  static std::atomic<int> n{0};
  return n;
}

template <typename T>
std::string show(const T& v) {
  std::ostringstream os;
  if constexpr (std::is_enum_v<T>) {
    os << static_cast<long long>(v);
  } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
    os << static_cast<int>(v);
  } else {
    os << v;
  }
  return os.str();
}

inline void fail(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what.c_str());
  // Stop flooding after many failures; the first ones are the useful ones.
  if (failures().fetch_add(1) + 1 >= 50) {
    std::fprintf(stderr, "too many failures, stopping\n");
    std::exit(1);
  }
}

// A printf-style failure message for check::fail.
template <typename... A>
std::string fmt(const char* f, A... a) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, a...);
  return buf;
}

inline int result(const char* test) {
  const int n = failures().load();
  if (n == 0) {
    std::printf("%s: all checks passed\n", test);
    return 0;
  }
  std::fprintf(stderr, "%s: %d check(s) failed\n", test, n);
  return 1;
}

}  // namespace check

// Same as check::result, under the name c_api_test.cc uses.
inline int check_report(const char* test) { return ::check::result(test); }

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) ::check::fail(__FILE__, __LINE__, #cond);             \
  } while (0)

#define CHECK_EQ(a, b)                                                              \
  do {                                                                              \
    /* copies: a reference could dangle (std::max returns one to temporaries) */   \
    const auto check_a_ = (a);                                                      \
    const auto check_b_ = (b);                                                      \
    if (!(check_a_ == check_b_)) {                                                  \
      ::check::fail(__FILE__, __LINE__,                                             \
                    std::string(#a " == " #b "  (") + ::check::show(check_a_) +     \
                        " vs " + ::check::show(check_b_) + ")");                    \
    }                                                                               \
  } while (0)

// Runs a named test function, printing its name (for ctest's output).
#define RUN_TEST(fn)                      \
  do {                                    \
    std::printf("-- %s\n", #fn);          \
    std::fflush(stdout);                  \
    fn();                                 \
  } while (0)
