#include "call_slots.h"

#include <array>
#include <atomic>
#include <mutex>
#include <utility>

#include "clock.h"
#include "hot_path.h"

namespace hotspan_addon::call_slots {

namespace {

// Written under g_mu when a slot is taken, before the function exists in JS;
// read by that binding's own thread. Relaxed is enough: the env thread that
// calls begin() and end() is the one that stored the pointer.
std::atomic<hotspan::ThreadState*> g_threads[kSlots];
std::mutex g_mu;
bool g_taken[kSlots];  // guarded by g_mu

template <size_t N>
napi_value BeginAt(napi_env env, napi_callback_info) {
  hotspan::ThreadState& t = *g_threads[N].load(std::memory_order_relaxed);
  return hot::EndResult(env, hotspan::fast::begin(t, t.begin_name, hotspan::clock::now_ticks()));
}

template <size_t N>
napi_value EndAt(napi_env env, napi_callback_info) {
  const int64_t now = hotspan::clock::now_ticks();
  return hot::EndResult(env, hotspan::fast::end(*g_threads[N].load(std::memory_order_relaxed), now));
}

template <size_t... N>
constexpr std::array<Functions, sizeof...(N)> MakeTable(std::index_sequence<N...>) {
  return {Functions{&BeginAt<N>, &EndAt<N>}...};
}

constexpr std::array<Functions, kSlots> kFunctions = MakeTable(std::make_index_sequence<kSlots>{});

}  // namespace

size_t Acquire(hotspan::ThreadState* thread, Functions* fns) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (size_t i = 0; i < kSlots; ++i) {
    if (g_taken[i]) continue;
    g_taken[i] = true;
    g_threads[i].store(thread, std::memory_order_relaxed);
    *fns = kFunctions[i];
    return i;
  }
  return kNone;
}

void Release(size_t slot) {
  if (slot == kNone) return;
  std::lock_guard<std::mutex> lock(g_mu);
  g_threads[slot].store(nullptr, std::memory_order_relaxed);
  g_taken[slot] = false;
}

}  // namespace hotspan_addon::call_slots
