#include "record/holder_check.h"

#include <algorithm>
#include <vector>

#include "record/per_thread_list.h"
#include "record/thread_state.h"

namespace hotspan::holder_check {

namespace {

struct Attachment {
  uint64_t tracer_id;
  // Weak: the env owns its state; a dead env must not be kept alive here.
  std::weak_ptr<ThreadState> state;
};

// A JS thread attaches to a handful of tracers at most.
using Attachments = PerThreadList<Attachment>;

bool live(const std::shared_ptr<ThreadState>& s) {
  return s && s->status.load(std::memory_order_relaxed) != ThreadState::kRetired;
}

}  // namespace

void piggyback_drain(TracerShared& shared) { shared.drain(); }

void grant(uint64_t tracer_id, const std::shared_ptr<ThreadState>& state) {
  auto* v = Attachments::get();
  if (v == nullptr) return;
  v->erase(std::remove_if(v->begin(), v->end(),
                          [](const Attachment& a) { return !live(a.state.lock()); }),
           v->end());
  v->push_back(Attachment{tracer_id, state});
  state->holder.store(true, std::memory_order_relaxed);
}

std::shared_ptr<ThreadState> holder_for(uint64_t tracer_id) {
  auto* v = Attachments::get();
  if (v == nullptr) return nullptr;
  for (const Attachment& a : *v) {
    if (a.tracer_id != tracer_id) continue;
    auto s = a.state.lock();
    if (live(s)) return s;
  }
  return nullptr;
}

void revoke(uint64_t tracer_id, ThreadState& state) {
  state.holder.store(false, std::memory_order_relaxed);
  auto* v = Attachments::get();
  if (v == nullptr) return;
  v->erase(std::remove_if(v->begin(), v->end(),
                          [&](const Attachment& a) {
                            if (a.tracer_id != tracer_id) return false;
                            auto s = a.state.lock();
                            return !s || s.get() == &state;
                          }),
           v->end());
}

}  // namespace hotspan::holder_check
