// Tracer: wires the registry, the shared block and the holder check together.
// Per-span work lives in thread_state.h; this file holds the tracer-wide
// operations (threads, tracks, groups, finalization, reading, close).
#include "record/tracer.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "record/async_track.h"
#include "record/clock_readings.h"
#include "record/close_barrier.h"
#include "record/counter_store.h"
#include "record/cpu_profile_store.h"
#include "record/clock.h"
#include "record/group_track.h"
#include "record/holder_check.h"
#include "record/imported_thread.h"
#include "record/native_thread_cache.h"
#include "record/registry.h"
#include "record/thread_state.h"
#include "record/trace_id.h"
#include "record/tracer_shared.h"

namespace hotspan {

namespace {
// Process-wide and never reused, so thread_local caches keyed by it cannot
// confuse a dead tracer with a new one.
std::atomic<uint64_t> g_next_tracer_id{1};
}  // namespace

struct Tracer::Impl {
  explicit Impl(TracerOptions opts)
      : id(g_next_tracer_id.fetch_add(1, std::memory_order_relaxed)),
        options(opts),
        shared(std::make_shared<TracerShared>(
            id, opts.wake_high_water, opts.time_unit == TimeUnit::kTicks && clock::tsc_enabled(),
            opts.memory_limit, opts.on_full)),
        registry(shared),
        cpu_profiles(opts.memory_limit / 4) {}

  bool closed() const { return shared->closed.load(std::memory_order_acquire); }

  std::atomic<uint64_t> sampled_out{0};  // count_sampled_out()

  // A track or group record stored by the calling thread: the holder
  // decision of this thread's state for the tracer, if it has one.
  void commit_or_enqueue(Timeline& tl, uint64_t written, ThreadState* caller = nullptr) {
    // The caller's own state (this tracer's, on this thread), when it holds:
    // no lookup.
    if (caller != nullptr && caller->finalizes_now()) {
      tl.commit_up_to(written);
      return;
    }
    const auto state = holder_check::holder_for(id);
    if (state && state->finalizes_now()) {
      tl.commit_up_to(written);
    } else {
      shared->enqueue(&tl, written, 1);
    }
  }

  // The track with timeline id `track`: the caller's cached one when it is that
  // track, else looked up (and cached). `held` keeps an uncached one alive.
  AsyncTrack* track_for(uint32_t track, AsyncCaller* caller, std::shared_ptr<AsyncTrack>& held) {
    if (caller != nullptr && caller->track_id == track && caller->track) return caller->track.get();
    held = registry.find_track(track);
    if (caller != nullptr && held) {
      caller->track_id = track;
      caller->track = held;
    }
    return held.get();
  }

  const uint64_t id;
  const TracerOptions options;
  const std::shared_ptr<TracerShared> shared;
  Registry registry;
  CounterStore counters;
  CpuProfileStore cpu_profiles;
};

std::shared_ptr<Tracer> Tracer::create(TracerOptions options) {
  options.memory_limit =
      std::min(std::max(options.memory_limit, ChunkPool::kMinLimit), ChunkPool::kMaxLimit);
  if (options.id_salt == 0) options.id_salt = trace_id::random_salt();
  return std::shared_ptr<Tracer>(new Tracer(options));
}

Tracer::Tracer(TracerOptions options) : impl_(new Impl(options)) { close_barrier::prepare(); }

Tracer::~Tracer() { close(); }

uint64_t Tracer::id() const { return impl_->id; }
uint64_t Tracer::id_salt() const { return impl_->options.id_salt; }
uint64_t Tracer::sampler() const { return impl_->options.sampler; }
uint64_t Tracer::keep() const { return impl_->options.keep; }
const std::vector<std::string>& Tracer::keep_names() const { return impl_->options.keep_names; }
int64_t Tracer::origin_ns() const { return impl_->options.origin_ns; }
const std::string& Tracer::process_name() const { return impl_->options.process_name; }
TimeUnit Tracer::time_unit() const { return impl_->options.time_unit; }
int64_t Tracer::now() const { return impl_->shared->now(); }

// ---- names ----

uint32_t Tracer::intern(std::string_view name) { return impl_->shared->names.intern(name); }
std::string Tracer::name_of(uint32_t id) const { return impl_->shared->names.name_of(id); }
size_t Tracer::name_count() const { return impl_->shared->names.count(); }

// ---- threads ----

std::shared_ptr<ThreadState> Tracer::attach_js_thread(std::string_view display_name, uint32_t timeline) {
  // One timeline per (tracer, thread): a second attach returns the first.
  if (auto existing = holder_check::holder_for(impl_->id)) return existing;
  auto state = impl_->registry.add_thread(TimelineKind::kJs, std::string(display_name), timeline);
  if (!state) return nullptr;
  if (state->status.load(std::memory_order_relaxed) == ThreadState::kLive) {
    holder_check::grant(impl_->id, state);
  }
  return state;
}

void Tracer::detach_thread(ThreadState& state, int64_t now) {
  // Runs on the state's own thread (env cleanup), so the owner-only fields
  // are ours to touch.
  if (state.status.load(std::memory_order_relaxed) == ThreadState::kLive) {
    state.abandon_open(now);
  }
  holder_check::revoke(impl_->id, state);
  uint8_t live = ThreadState::kLive;
  // Finalize everything it stored, batched or not; queued items for it
  // become no-ops (CAS-max). Closed: close() committed what the trace keeps.
  if (state.status.compare_exchange_strong(live, ThreadState::kRetired, std::memory_order_relaxed)) {
    state.timeline->sweep();
  }
  state.timeline->mark_exited();
}

std::shared_ptr<ImportedThread> Tracer::import_thread(std::string_view display_name, uint32_t timeline) {
  auto state = impl_->registry.add_thread(TimelineKind::kJs, std::string(display_name), timeline);
  if (!state || state->status.load(std::memory_order_relaxed) != ThreadState::kLive) return nullptr;
  return std::make_shared<ImportedThread>(shared_from_this(), std::move(state));
}

std::shared_ptr<ThreadState> Tracer::native_thread() {
  if (impl_->closed() || native_thread_cache::gone()) return nullptr;
  if (auto cached = native_thread_cache::find(impl_->id)) {
    return cached->status.load(std::memory_order_relaxed) == ThreadState::kTracerClosed
               ? nullptr
               : cached;
  }
  auto state = impl_->registry.add_thread(TimelineKind::kNative, std::string());
  if (state->status.load(std::memory_order_relaxed) != ThreadState::kLive) return nullptr;
  native_thread_cache::insert(impl_->id, state);
  return state;
}

void Tracer::set_thread_name(ThreadState& state, std::string_view name) {
  if (state.timeline->kind() == TimelineKind::kNative) {
    state.timeline->set_name("native: " + std::string(name));
  } else {
    state.timeline->set_name(std::string(name));
  }
}

// ---- async spans ----

uint32_t Tracer::track(std::string_view name, bool serial, bool as_named, uint32_t id) {
  return impl_->registry.track(name, serial, as_named, id);
}

Status Tracer::set_next_async_local(uint32_t track, uint32_t local) {
  auto t = impl_->registry.find_track(track);
  if (!t || local == 0) return Status::kInvalid;
  t->set_next_local(local);
  return Status::kOk;
}

std::shared_ptr<AsyncTrack> Tracer::find_track(uint32_t id) const { return impl_->registry.find_track(id); }

std::shared_ptr<GroupTrack> Tracer::group_track(bool create, uint32_t id) {
  return impl_->registry.groups(create, id);
}

uint64_t Tracer::async_begin(uint32_t track, uint32_t name, int64_t now, std::string_view attrs_json,
                             uint64_t parent_span, AsyncCaller* caller, const StoredContext* context) {
  if (impl_->closed() || name >= impl_->shared->names.count()) return 0;
  std::shared_ptr<AsyncTrack> held;
  AsyncTrack* t = impl_->track_for(track, caller, held);
  if (t == nullptr) return 0;
  return t->begin(name, now, attrs_json, parent_span, context);
}

Status Tracer::async_end(uint64_t token, int64_t now, uint16_t extra_flags, AsyncCaller* caller) {
  if (impl_->closed()) return Status::kClosed;
  std::shared_ptr<AsyncTrack> held;
  AsyncTrack* t = impl_->track_for(static_cast<uint32_t>(token >> 32), caller, held);
  if (t == nullptr) return Status::kInvalid;
  uint64_t written = 0;
  const Status s = t->end(token, now, extra_flags, &written);
  if (s == Status::kOk) impl_->commit_or_enqueue(t->timeline(), written, caller ? caller->state : nullptr);
  return s;
}

Status Tracer::async_end(uint64_t token, int64_t now, uint16_t extra_flags, AsyncEndChanges changes) {
  if (impl_->closed()) return Status::kClosed;
  if (changes.name != UINT32_MAX && changes.name >= impl_->shared->names.count()) return Status::kInvalid;
  auto t = impl_->registry.find_track(static_cast<uint32_t>(token >> 32));
  if (!t) return Status::kInvalid;
  uint64_t written = 0;
  const Status s = t->end(token, now, extra_flags, &written, &changes);
  if (s == Status::kOk) impl_->commit_or_enqueue(t->timeline(), written);
  return s;
}

size_t Tracer::open_async() const {
  size_t n = 0;
  for (const auto& t : impl_->registry.tracks()) n += t->open_count();
  return n;
}

std::vector<std::pair<uint64_t, uint32_t>> Tracer::open_async_spans() const {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (const auto& t : impl_->registry.tracks()) t->append_open(out);
  return out;
}

// ---- groups ----

Status Tracer::group_begin(uint32_t name, int64_t now, std::string attrs_json) {
  if (impl_->closed()) return Status::kClosed;
  if (name >= impl_->shared->names.count()) return Status::kInvalid;
  auto g = impl_->registry.groups(true);
  if (!g) return Status::kClosed;  // closed in between
  g->begin(name, now, std::move(attrs_json));
  return Status::kOk;
}

Status Tracer::group_end(int64_t now) {
  if (impl_->closed()) return Status::kClosed;
  auto g = impl_->registry.groups(false);
  if (!g) return Status::kNoOpenSpan;
  uint64_t written = 0;
  const Status s = g->end(now, &written);
  if (s == Status::kOk) impl_->commit_or_enqueue(g->timeline(), written);
  return s;
}

size_t Tracer::open_groups() const {
  auto g = impl_->registry.groups(false);
  return g ? g->open_count() : 0;
}

// ---- counters ----

Status Tracer::counter(std::string_view name, int64_t now_ns, double value) {
  if (impl_->closed()) return Status::kClosed;
  return impl_->counters.add(name, now_ns, value) ? Status::kOk : Status::kInvalid;
}

// ---- CPU profiles ----

Status Tracer::cpu_profile(CpuProfile profile) {
  if (impl_->closed()) return Status::kClosed;
  return impl_->cpu_profiles.add(std::move(profile)) ? Status::kOk : Status::kInvalid;
}

uint64_t Tracer::cpu_samples_dropped() const { return impl_->cpu_profiles.dropped(); }

// ---- finalization ----

void Tracer::flush() {
  // After close() the closed trace is final (an end() that raced close was
  // answered from it).
  if (impl_->shared->close_done.load(std::memory_order_acquire)) return;
  impl_->shared->drain();
  // Partial batches, and records of threads that never reach a batch.
  for (const auto& tl : impl_->registry.timelines()) tl->sweep();
}

size_t Tracer::pending() const { return impl_->shared->queue.records(); }

void Tracer::set_wake(std::function<void()> wake) {
  if (impl_->closed()) return;
  impl_->shared->wake.set(std::move(wake));
}

// ---- reading ----

FrozenSnapshot Tracer::freeze() const {
  FrozenSnapshot snap;
  const auto timelines = impl_->registry.timelines();
  snap.timelines.resize(timelines.size());
  for (size_t i = 0; i < timelines.size(); ++i) timelines[i]->freeze(timelines[i], snap.timelines[i]);
  // Names last: every name id in the frozen records was interned before the
  // record was stored, hence before this copy.
  snap.names = impl_->shared->names.all();
  snap.counters = impl_->counters.copy();
  snap.cpu_profiles = impl_->cpu_profiles.copy();
  snap.cpu_samples_dropped = impl_->cpu_profiles.dropped();
  return snap;
}


std::vector<TimelineCounts> Tracer::counts() const {
  std::vector<TimelineCounts> out;
  for (const auto& tl : impl_->registry.timelines()) out.push_back({tl->id(), tl->name(), tl->counts()});
  return out;
}

bool Tracer::lost_any() const { return impl_->shared->pool->lost(); }
size_t Tracer::memory_limit() const { return impl_->shared->pool->limit(); }
FullPolicy Tracer::on_full() const { return impl_->shared->pool->policy(); }
size_t Tracer::memory_used() const { return impl_->shared->pool->used(); }
void Tracer::count_sampled_out(uint64_t n) const {
  if (n != 0) impl_->sampled_out.fetch_add(n, std::memory_order_relaxed);
}
uint64_t Tracer::sampled_out() const { return impl_->sampled_out.load(std::memory_order_relaxed); }

std::vector<std::shared_ptr<Timeline>> Tracer::timelines() const { return impl_->registry.timelines(); }
ChunkPool& Tracer::pool() const { return *impl_->shared->pool; }
AttrDict& Tracer::attr_dict() const { return *impl_->shared->dict; }
std::vector<std::string> Tracer::names() const { return impl_->shared->names.all(); }

// ---- close ----

void Tracer::close() {
  if (impl_->shared->closed.exchange(true, std::memory_order_acq_rel)) return;
  impl_->registry.close_states();
  impl_->shared->wake.clear();
  // Every end() either sees its state closed or has its record seen below.
  close_barrier::closer();
  // What was stored before close stays readable.
  flush();
  impl_->shared->close_done.store(true, std::memory_order_release);
}

bool Tracer::closed() const { return impl_->closed(); }

}  // namespace hotspan
