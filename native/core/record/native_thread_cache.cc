#include "record/native_thread_cache.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "record/per_thread_list.h"

namespace hotspan::native_thread_cache {

namespace {

struct Entry {
  uint64_t tracer_id;
  std::shared_ptr<ThreadState> state;
};

void on_exit(std::vector<Entry>& entries) {
  for (Entry& e : entries) e.state->on_thread_exit();
}

using Cache = PerThreadList<Entry, &on_exit>;

}  // namespace

bool gone() { return Cache::get() == nullptr; }

std::shared_ptr<ThreadState> find(uint64_t tracer_id) {
  const auto* entries = Cache::get();
  if (entries == nullptr) return nullptr;
  for (const Entry& e : *entries) {
    if (e.tracer_id == tracer_id) return e.state;
  }
  return nullptr;
}

void insert(uint64_t tracer_id, std::shared_ptr<ThreadState> state) {
  auto* entries = Cache::get();
  if (entries == nullptr) return;
  // A long-lived thread that meets many short-lived tracers must not keep
  // their records alive forever.
  entries->erase(std::remove_if(entries->begin(), entries->end(),
                                [](const Entry& e) {
                                  return e.state->status.load(std::memory_order_relaxed) ==
                                         ThreadState::kTracerClosed;
                                }),
                 entries->end());
  entries->push_back(Entry{tracer_id, std::move(state)});
}

}  // namespace hotspan::native_thread_cache
