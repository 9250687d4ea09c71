#include "holder_check.h"

#include <algorithm>
#include <vector>

namespace hotspan::holder_check {

namespace {

struct Attachment {
  uint64_t tracer_id;
  // Weak: the env owns its state; a dead env must not be kept alive here.
  std::weak_ptr<ThreadState> state;
};

// One list per thread; a JS thread attaches to a handful of tracers at most.
// t_gone (trivially destructible) tells calls made from later thread_local
// destructors that the list is already destroyed.
thread_local bool t_gone = false;
struct Attachments {
  std::vector<Attachment> list;
  ~Attachments() { t_gone = true; }
};
thread_local Attachments t_attachments_holder;

void prune() {
  auto& v = t_attachments_holder.list;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [](const Attachment& a) {
                           auto s = a.state.lock();
                           return !s || s->status.load(std::memory_order_relaxed) ==
                                            ThreadState::kRetired;
                         }),
          v.end());
}

}  // namespace

void remember(uint64_t tracer_id, const std::shared_ptr<ThreadState>& state) {
  if (t_gone) return;
  prune();
  t_attachments_holder.list.push_back(Attachment{tracer_id, state});
}

std::shared_ptr<ThreadState> attached(uint64_t tracer_id) {
  if (t_gone) return nullptr;
  for (const Attachment& a : t_attachments_holder.list) {
    if (a.tracer_id != tracer_id) continue;
    auto s = a.state.lock();
    if (s && s->status.load(std::memory_order_relaxed) != ThreadState::kRetired) return s;
  }
  return nullptr;
}

void forget(uint64_t tracer_id, const ThreadState* state) {
  if (t_gone) return;
  auto& v = t_attachments_holder.list;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [&](const Attachment& a) {
                           if (a.tracer_id != tracer_id) return false;
                           auto s = a.state.lock();
                           return !s || s.get() == state;
                         }),
          v.end());
}

bool thread_is_holder(uint64_t tracer_id) {
  if (t_gone) return false;
  for (const Attachment& a : t_attachments_holder.list) {
    if (a.tracer_id != tracer_id) continue;
    auto s = a.state.lock();
    if (s && state_is_holder(*s)) return true;
  }
  return false;
}

}  // namespace hotspan::holder_check
