// HOTSPAN_SCOPE (native/include/hotspan.hpp) against the C ABI it calls and
// the bare loop, per span, on one std::thread: the same thread runs
// `rounds` rounds, each timing n spans of every variant in a rotating order
// (thread CPU time, so a preemption does not count), and returns each
// variant's per-round ns per span. Variants: bare (two reads of the clock
// hotspan records with and a 28-byte store into a reused ring), cabi
// (api->begin/api->end with a name interned up front), hpp (HOTSPAN_SCOPE),
// hpp-detached (HOTSPAN_SCOPE with no table attached).
// scaling(api, n, rounds): bare and hpp on 1 and on 2 threads started
// together (thread_race.h), thread CPU ns per span per round (mean over the
// threads). Each round starts new threads: new timelines, warmed before the flag.
#include <node_api.h>

#include <cstdint>
#include <string>
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

void bare_loop(uint64_t n, Rec* ring) {
  for (uint64_t i = 0; i < n; i++) {
    Rec& r = ring[i & (kRing - 1)];
    r.start = ticks();
    r.name = static_cast<uint32_t>(i);
    r.duration = static_cast<uint32_t>(ticks() - r.start);
  }
}

void hpp_loop(uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    HOTSPAN_SCOPE("bench.hpp");
  }
}

// One ring per thread, as each thread of the tracer has its own chunks.
Rec g_rings[2][kRing];

// (api, n, rounds), attached: false (a JS error thrown) when they are not.
bool bench_args(napi_env env, napi_callback_info info, const char* fn, const hotspan_api_v1** api, uint64_t* n,
                int* rounds) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  void* data = nullptr;
  double nd = 0, rd = 0;
  if (argc < 3 || napi_get_value_external(env, argv[0], &data) != napi_ok ||
      napi_get_value_double(env, argv[1], &nd) != napi_ok ||
      napi_get_value_double(env, argv[2], &rd) != napi_ok) {
    napi_throw_type_error(env, nullptr, (std::string(fn) + "(api, n, rounds)").c_str());
    return false;
  }
  *api = static_cast<const hotspan_api_v1*>(data);
  if (hotspan::attach(*api) != hotspan::Attach::kOk) {
    napi_throw_error(env, nullptr, (std::string(fn) + ": attach failed").c_str());
    return false;
  }
  *n = static_cast<uint64_t>(nd);
  *rounds = static_cast<int>(rd);
  return true;
}

// compare(api, n, rounds) -> { bare: [ns/span per round], cabi: [...], ... }
napi_value Compare(napi_env env, napi_callback_info info) {
  const hotspan_api_v1* api = nullptr;
  uint64_t n = 0;
  int rounds = 0;
  if (!bench_args(env, info, "compare", &api, &n, &rounds)) return nullptr;
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

// scaling(api, n, rounds) -> { "bare-1t": [...], "bare-2t": [...], "hpp-1t": [...],
// "hpp-2t": [...], counts: { <variant>: [faults, waits, preempted] } }: per
// round, thread CPU ns per span (mean over the threads); counts summed over
// every round's threads (thread_race.h ThreadCounts).
napi_value Scaling(napi_env env, napi_callback_info info) {
  const hotspan_api_v1* api = nullptr;
  uint64_t n = 0;
  int rounds = 0;
  if (!bench_args(env, info, "scaling", &api, &n, &rounds)) return nullptr;
  const char* const names[4] = {"bare-1t", "bare-2t", "hpp-1t", "hpp-2t"};
  std::vector<double> per[4];
  bench::ThreadCounts sums[4];
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 4; k++) {
      const int v = (r + k) % 4;
      const int threads = v % 2 ? 2 : 1;
      const bool hpp = v >= 2;
      // Warm each new thread (its timeline, its chunks) before the flag.
      const auto res = bench::race_threads(
          threads, n,
          [&](int t) {
            if (hpp) {
              hpp_loop(n / 10);
            } else {
              bare_loop(n / 10, g_rings[t]);
            }
          },
          [&](int t) {
            if (hpp) {
              hpp_loop(n);
            } else {
              bare_loop(n, g_rings[t]);
            }
          },
          [](int) {});
      per[v].push_back(res.cpu_ns_per_span);
      sums[v].faults += res.counts.faults;
      sums[v].waits += res.counts.waits;
      sums[v].preempted += res.counts.preempted;
    }
  }
  napi_value out;
  napi_create_object(env, &out);
  for (int v = 0; v < 4; v++) {
    napi_value arr;
    napi_create_array_with_length(env, per[v].size(), &arr);
    for (size_t i = 0; i < per[v].size(); i++) napi_set_element(env, arr, static_cast<uint32_t>(i), bench::make_double(env, per[v][i]));
    napi_set_named_property(env, out, names[v], arr);
  }
  napi_value counts;
  napi_create_object(env, &counts);
  for (int v = 0; v < 4; v++) {
    napi_value arr;
    napi_create_array_with_length(env, 3, &arr);
    const int64_t k[3] = {sums[v].faults, sums[v].waits, sums[v].preempted};
    for (uint32_t i = 0; i < 3; i++) napi_set_element(env, arr, i, bench::make_double(env, static_cast<double>(k[i])));
    napi_set_named_property(env, counts, names[v], arr);
  }
  napi_set_named_property(env, out, "counts", counts);
  return out;
}

}  // namespace

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "compare", NAPI_AUTO_LENGTH, Compare, nullptr, &fn);
  napi_set_named_property(env, exports, "compare", fn);
  napi_create_function(env, "scaling", NAPI_AUTO_LENGTH, Scaling, nullptr, &fn);
  napi_set_named_property(env, exports, "scaling", fn);
  return exports;
}
