#include "call_slots.h"

#include <array>
#include <atomic>
#include <mutex>
#include <utility>

#include "record/clock.h"
#include "record/hot_inline.h"
#include "hot_path.h"
#include "span_calls.h"
#include "tracer_binding.h"

namespace hotspan_addon::call_slots {

namespace {

// Written under g_mu when a slot is taken, before the function exists in JS;
// read by that binding's own thread. Relaxed is enough: the env thread that
// calls begin() and end() is the one that stored the pointer.
std::atomic<hotspan::ThreadState*> g_threads[kSlots];
std::atomic<TracerBinding*> g_bindings[kSlots];  // g_threads[i] is its thread
std::mutex g_mu;
bool g_taken[kSlots];  // guarded by g_mu

// The clock, chosen when the slot is taken (the source is decided once per
// process), so a call does not test it: the TSC, or now_ticks() as decided.
template <bool kTsc>
HOTSPAN_HOT_INLINE int64_t Ticks() {
#if defined(__x86_64__)
  if constexpr (kTsc) return static_cast<int64_t>(__rdtsc());
#endif
  return hotspan::clock::now_ticks();
}

// begin's rare cases, tail-called: the slot functions keep no stack frame.
HOTSPAN_COLD napi_value BeginSlow(napi_env env, hotspan::ThreadState& t, uint32_t name, int64_t now) {
  return hot::EndResult(env, t.begin_slow(name, now));
}

template <size_t N, bool kTsc>
napi_value BeginAt(napi_env env, napi_callback_info info) {
  hotspan::ThreadState& t = *g_threads[N].load(std::memory_order_relaxed);
  const uint32_t name = t.begin_name;
  // The view and argument forms: a tag, never a name id (span_calls.h).
  if (__builtin_expect(name >= span_calls::kNameArgs, 0)) {
    return span_calls::BeginTagged(env, info, *g_bindings[N].load(std::memory_order_relaxed), name);
  }
  const int64_t now = Ticks<kTsc>();
  if (__builtin_expect(hotspan::fast::begin_common(t, name, now), 1)) return nullptr;
  return BeginSlow(env, t, name, now);
}

HOTSPAN_COLD napi_value StatusResult(napi_env env, hotspan::Status status) {
  return hot::StatusValue(env, status);
}

template <size_t N, bool kTsc>
napi_value EndAt(napi_env env, napi_callback_info info) {
  const int64_t now = Ticks<kTsc>();
  hotspan::ThreadState& t = *g_threads[N].load(std::memory_order_relaxed);
  if (__builtin_expect(t.begin_name == span_calls::kNameArgs, 0)) {
    return span_calls::EndArgs(env, info, *g_bindings[N].load(std::memory_order_relaxed), now);
  }
  const hotspan::Status s = hotspan::fast::end(t, now);
  if (__builtin_expect(s == hotspan::Status::kOk, 1)) return nullptr;
  return StatusResult(env, s);
}

// The async calls read the clock inside the core call (hot_path.cc), so
// they have one form for both clocks.
template <size_t N>
napi_value AsyncBeginAt(napi_env env, napi_callback_info info) {
  return span_calls::AsyncBeginOf(env, info, *g_bindings[N].load(std::memory_order_relaxed));
}

template <size_t N>
napi_value AsyncEndAt(napi_env env, napi_callback_info info) {
  return span_calls::AsyncEndOf(env, info, *g_bindings[N].load(std::memory_order_relaxed));
}

template <bool kTsc, size_t... N>
constexpr std::array<Functions, sizeof...(N)> MakeTable(std::index_sequence<N...>) {
  return {Functions{&BeginAt<N, kTsc>, &EndAt<N, kTsc>, &AsyncBeginAt<N>, &AsyncEndAt<N>}...};
}

// [1]: the TSC's functions, [0]: the others'.
constexpr std::array<Functions, kSlots> kFunctions[2] = {
    MakeTable<false>(std::make_index_sequence<kSlots>{}),
    MakeTable<true>(std::make_index_sequence<kSlots>{}),
};

}  // namespace

size_t Acquire(TracerBinding* binding, Functions* fns) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (size_t i = 0; i < kSlots; ++i) {
    if (g_taken[i]) continue;
    g_taken[i] = true;
    g_threads[i].store(binding->thread, std::memory_order_relaxed);
    g_bindings[i].store(binding, std::memory_order_relaxed);
    *fns = kFunctions[hotspan::clock::tsc_enabled() ? 1 : 0][i];
    return i;
  }
  return kNone;
}

void Release(size_t slot) {
  if (slot == kNone) return;
  std::lock_guard<std::mutex> lock(g_mu);
  g_threads[slot].store(nullptr, std::memory_order_relaxed);
  g_bindings[slot].store(nullptr, std::memory_order_relaxed);
  g_taken[slot] = false;
}

}  // namespace hotspan_addon::call_slots
