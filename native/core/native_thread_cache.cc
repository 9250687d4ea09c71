#include "native_thread_cache.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace hotspan::native_thread_cache {

namespace {

struct Entry {
  uint64_t tracer_id;
  std::shared_ptr<ThreadState> state;
};

// Trivially destructible, so it stays readable while other thread_local
// destructors run after the cache's own.
thread_local bool t_gone = false;

struct Cache {
  std::vector<Entry> entries;
  size_t last = 0;  // most recently used, checked first
  ~Cache() {
    t_gone = true;
    for (Entry& e : entries) e.state->on_thread_exit();
  }
};

thread_local Cache t_cache;

}  // namespace

bool gone() { return t_gone; }

std::shared_ptr<ThreadState> find(uint64_t tracer_id) {
  if (t_gone) return nullptr;
  Cache& c = t_cache;
  if (c.last < c.entries.size() && c.entries[c.last].tracer_id == tracer_id) {
    return c.entries[c.last].state;
  }
  for (size_t i = 0; i < c.entries.size(); ++i) {
    if (c.entries[i].tracer_id == tracer_id) {
      c.last = i;
      return c.entries[i].state;
    }
  }
  return nullptr;
}

void insert(uint64_t tracer_id, std::shared_ptr<ThreadState> state) {
  if (t_gone) return;
  Cache& c = t_cache;
  // A long-lived thread that meets many short-lived tracers must not keep
  // their records alive forever.
  c.entries.erase(std::remove_if(c.entries.begin(), c.entries.end(),
                                 [](const Entry& e) {
                                   return e.state->status.load(std::memory_order_relaxed) ==
                                          ThreadState::kTracerClosed;
                                 }),
                  c.entries.end());
  c.entries.push_back(Entry{tracer_id, std::move(state)});
  c.last = c.entries.size() - 1;
}

}  // namespace hotspan::native_thread_cache
