// HOTSPAN_SCOPE (native/include/hotspan.hpp) against the C ABI it calls and
// the bare loop, per span, on one std::thread: the same thread runs
// `rounds` rounds, each timing n spans of every variant in a rotating order
// (thread CPU time, so a preemption does not count), and returns each
// variant's per-round ns per span. Variants: bare (two reads of the clock
// hotspan records with and a 28-byte store into a reused ring), cabi
// (api->begin/api->end with a name interned up front), hpp (HOTSPAN_SCOPE),
// hpp-detached (HOTSPAN_SCOPE with no table attached).
#include <node_api.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "hotspan.hpp"
#include "thread_race.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
inline int64_t ticks() { return static_cast<int64_t>(__rdtsc()); }
#else
inline int64_t ticks() { return bench::mono_ns(); }
#endif

namespace {

struct __attribute__((packed, aligned(4))) Rec {
  int64_t start;
  uint32_t duration, id, parent, name, flags;
};
constexpr uint32_t kRing = 1u << 16;
Rec g_ring[kRing];

enum Variant { kBare, kCabi, kHpp, kDetached, kVariants };
const char* const kNames[kVariants] = {"bare", "cabi", "hpp", "hpp-detached"};

int64_t run(Variant v, const hotspan_api_v1* api, uint32_t id, uint64_t n) {
  void* tr = api->tracer;
  if (v == kDetached) hotspan::detach();
  const int64_t c0 = bench::thread_cpu_ns();
  switch (v) {
    case kBare:
      for (uint64_t i = 0; i < n; i++) {
        Rec& r = g_ring[i & (kRing - 1)];
        r.start = ticks();
        r.name = static_cast<uint32_t>(i);
        r.duration = static_cast<uint32_t>(ticks() - r.start);
      }
      break;
    case kCabi:
      for (uint64_t i = 0; i < n; i++) {
        api->begin(tr, id);
        api->end(tr);
      }
      break;
    case kHpp:
    case kDetached:
      for (uint64_t i = 0; i < n; i++) {
        HOTSPAN_SCOPE("bench.hpp");
      }
      break;
    default:
      break;
  }
  const int64_t ns = bench::thread_cpu_ns() - c0;
  if (v == kDetached) hotspan::attach(api);
  return ns;
}

// compare(api, n, rounds) -> { bare: [ns/span per round], cabi: [...], ... }
napi_value Compare(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  void* data = nullptr;
  double nd = 0, rd = 0;
  if (argc < 3 || napi_get_value_external(env, argv[0], &data) != napi_ok ||
      napi_get_value_double(env, argv[1], &nd) != napi_ok ||
      napi_get_value_double(env, argv[2], &rd) != napi_ok) {
    napi_throw_type_error(env, nullptr, "compare(api, n, rounds)");
    return nullptr;
  }
  const auto* api = static_cast<const hotspan_api_v1*>(data);
  if (hotspan::attach(api) != hotspan::Attach::kOk) {
    napi_throw_error(env, nullptr, "compare: attach failed");
    return nullptr;
  }
  const uint64_t n = static_cast<uint64_t>(nd);
  const int rounds = static_cast<int>(rd);
  std::vector<double> per[kVariants];
  std::thread worker([&] {
    uint32_t id = 0;
    api->intern(api->tracer, "bench.cabi", 10, &id);
    for (int v = 0; v < kVariants; v++) run(static_cast<Variant>(v), api, id, n / 10);  // warm-up
    for (int r = 0; r < rounds; r++) {
      for (int k = 0; k < kVariants; k++) {
        const auto v = static_cast<Variant>((r + k) % kVariants);
        per[v].push_back(static_cast<double>(run(v, api, id, n)) / static_cast<double>(n));
      }
    }
  });
  worker.join();
  napi_value out;
  napi_create_object(env, &out);
  for (int v = 0; v < kVariants; v++) {
    napi_value arr;
    napi_create_array_with_length(env, per[v].size(), &arr);
    for (size_t i = 0; i < per[v].size(); i++) napi_set_element(env, arr, static_cast<uint32_t>(i), bench::make_double(env, per[v][i]));
    napi_set_named_property(env, out, kNames[v], arr);
  }
  return out;
}

}  // namespace

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "compare", NAPI_AUTO_LENGTH, Compare, nullptr, &fn);
  napi_set_named_property(env, exports, "compare", fn);
  return exports;
}
