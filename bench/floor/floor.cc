// The floor for a JS span: the least a native tracer can do per span.
// begin(id): napi_get_cb_info + napi_get_value_uint32 (the two Node-API calls),
// one clock read, one store into a preallocated ring; end(): one clock read and
// one store. No node-addon-api, no thread_local, no allocation: whatever
// hotspan spends above this is overhead of its own.
//
// Also the bare C++ loop (two clock reads and a store per span, no Node-API) on
// the calling thread and on 1..N std::threads, the comparison for native-thread
// spans.
#include <node_api.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include <sys/mman.h>

#include "thread_race.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define FLOOR_HAVE_TSC 1
#else
#define FLOOR_HAVE_TSC 0
#endif

namespace {

// Same layout and size as hotspan's stored record (StoredSpan, 28 bytes: the
// end kept as a 32-bit duration), so the store costs the same.
struct __attribute__((packed, aligned(4))) Rec {
  int64_t start;
  uint32_t duration;
  uint32_t id;
  uint32_t parent;
  uint32_t name;
  uint32_t flags;
};
static_assert(sizeof(Rec) == 28, "28-byte records, like hotspan");

// 64K records = 1.75 MiB: a ring, reused, so the floor never pays page faults.
constexpr uint32_t kRing = 1u << 16;

struct alignas(64) Ring {
  Rec recs[kRing];
  uint32_t pos = 0;
};

using bench::make_double;
using bench::mono_ns;
using bench::thread_cpu_ns;

#if FLOOR_HAVE_TSC
inline int64_t tsc() { return static_cast<int64_t>(__rdtsc()); }
#else
inline int64_t tsc() { return mono_ns(); }
#endif

template <int64_t (*Clock)()>
napi_value Begin(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  void* data;
  napi_get_cb_info(env, info, &argc, &arg, nullptr, &data);
  uint32_t name = 0;
  napi_get_value_uint32(env, arg, &name);
  Ring* ring = static_cast<Ring*>(data);
  Rec& r = ring->recs[ring->pos & (kRing - 1)];
  r.name = name;
  r.start = Clock();
  return nullptr;
}

// end() takes no argument; the only Node-API call of the pair that it would
// need is get_cb_info for the data pointer, which begin already counted: to
// keep exactly two calls per span it reaches the ring through a static.
Ring* g_ring = nullptr;

template <int64_t (*Clock)()>
napi_value End(napi_env, napi_callback_info) {
  Ring* ring = g_ring;
  Rec& r = ring->recs[ring->pos & (kRing - 1)];
  r.duration = static_cast<uint32_t>(Clock() - r.start);
  ring->pos++;
  return nullptr;
}

// Bare loop on the calling thread: two clock reads and a store per span.
// Returns the thread CPU time of the loop, ns.
template <int64_t (*Clock)()>
int64_t bare_loop(Ring& ring, uint64_t n) {
  int64_t t0 = thread_cpu_ns();
  for (uint64_t i = 0; i < n; i++) {
    Rec& r = ring.recs[ring.pos & (kRing - 1)];
    r.start = Clock();
    r.name = static_cast<uint32_t>(i);
    r.duration = static_cast<uint32_t>(Clock() - r.start);
    ring.pos++;
  }
  return thread_cpu_ns() - t0;
}

double arg_double(napi_env env, napi_callback_info info, size_t i, double fallback) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (i >= argc) return fallback;
  double v = fallback;
  if (napi_get_value_double(env, argv[i], &v) != napi_ok) return fallback;
  return v;
}

// The bare loop storing every span into memory never touched before (n * 28
// bytes, mmap'd), as a tracer that keeps every record must: the difference to
// the ring is the first-touch page-fault cost per span. huge: madvise
// MADV_HUGEPAGE first (one fault per 2 MiB instead of per 4 KiB, where THP is
// available in madvise mode).
int64_t fresh_loop(uint64_t n, bool huge) {
  const size_t bytes = ((n * sizeof(Rec)) + (2u << 20) - 1) & ~static_cast<size_t>((2u << 20) - 1);
  void* mem = mmap(nullptr, bytes + (2u << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return -1;
  // 2 MiB-align so huge pages can back it.
  uintptr_t base = (reinterpret_cast<uintptr_t>(mem) + (2u << 20) - 1) & ~static_cast<uintptr_t>((2u << 20) - 1);
  Rec* recs = reinterpret_cast<Rec*>(base);
#ifdef MADV_HUGEPAGE
  if (huge) madvise(recs, bytes, MADV_HUGEPAGE);
#endif
  int64_t t0 = thread_cpu_ns();
  for (uint64_t i = 0; i < n; i++) {
    Rec& r = recs[i];
    r.start = mono_ns();
    r.name = static_cast<uint32_t>(i);
    r.duration = static_cast<uint32_t>(mono_ns() - r.start);
  }
  int64_t dt = thread_cpu_ns() - t0;
  munmap(mem, bytes + (2u << 20));
  return dt;
}

// bareLoop(n, useTsc, fresh): ns (thread CPU time) per span on the calling thread. fresh: 0 the
// ring, 1 fresh memory, 2 fresh memory with MADV_HUGEPAGE (clock_gettime).
napi_value BareLoop(napi_env env, napi_callback_info info) {
  uint64_t n = static_cast<uint64_t>(arg_double(env, info, 0, 1e6));
  bool use_tsc = arg_double(env, info, 1, 0) != 0;
  int fresh = static_cast<int>(arg_double(env, info, 2, 0));
  int64_t ns;
  if (fresh != 0) {
    ns = fresh_loop(n, fresh == 2);
  } else {
    std::unique_ptr<Ring> ring(new Ring());
    ns = use_tsc ? bare_loop<tsc>(*ring, n) : bare_loop<mono_ns>(*ring, n);
  }
  return make_double(env, static_cast<double>(ns) / static_cast<double>(n));
}

// bareThreads(n, threads, useTsc): every thread records n spans into its own ring.
// Threads start together (spin on a flag) so thread creation is not timed.
// Returns [wall ns, mean per-thread CPU ns per span].
napi_value BareThreads(napi_env env, napi_callback_info info) {
  uint64_t n = static_cast<uint64_t>(arg_double(env, info, 0, 1e6));
  int threads = static_cast<int>(arg_double(env, info, 1, 1));
  if (threads < 1) threads = 1;
  bool use_tsc = arg_double(env, info, 2, 0) != 0;
  std::vector<std::unique_ptr<Ring>> rings;
  for (int t = 0; t < threads; t++) rings.emplace_back(new Ring());
  const bench::RaceResult race = bench::race_threads(
      threads, n, [](int) {},
      [&](int t) { use_tsc ? bare_loop<tsc>(*rings[t], n) : bare_loop<mono_ns>(*rings[t], n); },
      [](int) {});
  napi_value arr;
  napi_create_array_with_length(env, 2, &arr);
  napi_set_element(env, arr, 0, make_double(env, static_cast<double>(race.wall_ns)));
  napi_set_element(env, arr, 1, make_double(env, race.cpu_ns_per_span));
  return arr;
}

// checksum(): reads the ring so no store is dead.
napi_value Checksum(napi_env env, napi_callback_info) {
  int64_t sum = 0;
  for (uint32_t i = 0; i < kRing; i++) sum += g_ring->recs[i].duration;
  return make_double(env, static_cast<double>(sum) + g_ring->pos);
}

void add_fn(napi_env env, napi_value exports, const char* name, napi_callback cb, void* data) {
  napi_value fn;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, data, &fn);
  napi_set_named_property(env, exports, name, fn);
}

napi_value Init(napi_env env, napi_value exports) {
  // One ring per process; the bench loads the addon on the main thread only.
  if (!g_ring) g_ring = new Ring();
  add_fn(env, exports, "begin", Begin<mono_ns>, g_ring);
  add_fn(env, exports, "end", End<mono_ns>, g_ring);
  add_fn(env, exports, "beginTsc", Begin<tsc>, g_ring);
  add_fn(env, exports, "endTsc", End<tsc>, g_ring);
  add_fn(env, exports, "bareLoop", BareLoop, nullptr);
  add_fn(env, exports, "bareThreads", BareThreads, nullptr);
  add_fn(env, exports, "checksum", Checksum, nullptr);
  napi_value has_tsc;
  napi_get_boolean(env, FLOOR_HAVE_TSC != 0, &has_tsc);
  napi_set_named_property(env, exports, "hasTsc", has_tsc);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
