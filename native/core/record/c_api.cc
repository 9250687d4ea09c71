// The implementation side of native/include/hotspan.h: one function table and
// one small context per tracer, both leaked on purpose (a consumer addon may
// keep the table pointer and call through it on any thread at any time, even
// after the tracer and the addon env that made it are gone).
//
// Hot entries (begin/end) take no lock and touch no shared refcount: a
// thread_local cache keyed by the context pointer holds the thread's
// ThreadState, obtained once through Tracer::native_thread(), and they call
// the core's inline fast::begin/end on it (which reject unknown name ids and
// answer kClosed after close, even after the Tracer died). Contexts are never
// freed, so a key can never be reused by another tracer (no ABA). Everything
// else may lock the context's weak_ptr<Tracer> per call.
#include "record/c_api.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "record/clock.h"
#include "record/per_thread_list.h"
#include "record/thread_state.h"

namespace hotspan {
namespace {

// Lets entry points reject a pointer that is not a context at all (another
// table's field, garbage) with HOTSPAN_INVALID instead of reading through it
// blindly; NULL is the common case this guards.
constexpr uint64_t kContextMagic = 0x6873706e63617069ull;  // "hspncapi"

struct Context {
  uint64_t magic = kContextMagic;
  hotspan_api_v1 table{};
  std::weak_ptr<Tracer> tracer;
  int64_t origin_ns = 0;
  bool ticks = false;  // the tracer's TimeUnit is kTicks
};

// A record timestamp in the context's tracer's unit.
inline int64_t record_now(const Context* ctx) {
  // Tracers made by the addon record ticks; the ns path is for tests.
  return HOTSPAN_UNLIKELY(!ctx->ticks) ? clock::detail::now_ns_outline() : clock::now_ticks();
}

const Context* as_context(void* p) {
  auto* ctx = static_cast<const Context*>(p);
  return ctx != nullptr && ctx->magic == kContextMagic ? ctx : nullptr;
}

// Status is defined from the C codes (tracer.h).
inline hotspan_status to_c(Status s) { return static_cast<hotspan_status>(s); }

// ---- per-thread cache ----

struct CacheEntry {
  const Context* ctx = nullptr;
  // The thread's state for ctx's tracer; null once the tracer was seen closed
  // or destroyed (then the entry is only a "closed" marker).
  std::shared_ptr<ThreadState> state;
};

// The hot path reads only this trivially destructible copy of the last-used
// entry (no TLS init guard, no refcount). `state` is borrowed from the owning
// entry in ThreadCache.
struct FastEntry {
  const Context* ctx;
  ThreadState* state;
};
// initial-exec: read at a fixed offset from the thread pointer, not through
// __tls_get_addr on every begin/end (the addon is dlopen'ed, whose default
// model is general-dynamic). 16 bytes of glibc's static-TLS surplus.
__attribute__((tls_model("initial-exec"))) thread_local FastEntry t_fast{nullptr, nullptr};
void forget_fast(std::vector<CacheEntry>&) { t_fast = FastEntry{nullptr, nullptr}; }

// The thread's entries. Once destroyed (thread exit), calls made later by
// other thread_local destructors get HOTSPAN_CLOSED.
using ThreadCache = PerThreadList<CacheEntry, &forget_fast>;

CacheEntry* find_entry(std::vector<CacheEntry>& entries, const Context* ctx) {
  for (auto& e : entries) {
    if (e.ctx == ctx) return &e;
  }
  return nullptr;
}

// Drops closed markers and states of closed tracers first, so a long-lived
// thread that meets many short-lived tracers keeps neither their markers nor
// their records alive (a dropped entry is rebuilt as a marker if needed).
CacheEntry* add_entry(std::vector<CacheEntry>& entries, CacheEntry e) {
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const CacheEntry& x) {
                                 return !x.state || x.state->status.load(std::memory_order_relaxed) ==
                                                        ThreadState::kTracerClosed;
                               }),
                entries.end());
  entries.push_back(std::move(e));
  return &entries.back();
}

void remember_fast(const CacheEntry& e) {
  t_fast = FastEntry{e.ctx, e.state.get()};
}

// The cache entry for (this thread, ctx), or nullptr after thread teardown.
// create=false: no new timeline is made for a thread that never began a span
// (returns nullptr when there is no entry yet).
CacheEntry* entry_for(const Context* ctx, bool create) {
  std::vector<CacheEntry>* entries = ThreadCache::get();
  if (entries == nullptr) return nullptr;
  CacheEntry* e = find_entry(*entries, ctx);
  if (e == nullptr) {
    if (!create) return nullptr;
    CacheEntry fresh;
    fresh.ctx = ctx;
    if (auto tracer = ctx->tracer.lock()) fresh.state = tracer->native_thread();  // null once closed
    e = add_entry(*entries, std::move(fresh));
  }
  remember_fast(*e);
  return e;
}

void mark_closed(CacheEntry* e) {
  e->state.reset();
  remember_fast(*e);
}

// Lets a tracer that closed release this thread's state the first time the
// thread notices, so later calls are answered from the marker alone.
hotspan_status settle(CacheEntry* e, Status s) {
  if (s == Status::kClosed) mark_closed(e);
  return to_c(s);
}

// ---- entry points ----

// The first call of this thread for ctx, or another tracer used in between.
HOTSPAN_COLD hotspan_status begin_slow(const Context* ctx, uint32_t name) {
  CacheEntry* e = entry_for(ctx, true);
  if (e == nullptr || !e->state) return HOTSPAN_CLOSED;
  return settle(e, fast::begin(*e->state, name, record_now(ctx)));
}

// The answer for a thread with no state for ctx (it never recorded, or it
// is being torn down): `live` while the tracer is open, else HOTSPAN_CLOSED.
// No timeline is created just to say so.
hotspan_status without_state(const Context* ctx, hotspan_status live) {
  if (ThreadCache::get() == nullptr) return HOTSPAN_CLOSED;
  auto t = ctx->tracer.lock();
  return !t || t->closed() ? HOTSPAN_CLOSED : live;
}

HOTSPAN_COLD hotspan_status end_slow(const Context* ctx, int64_t now) {
  CacheEntry* e = entry_for(ctx, false);
  if (e == nullptr) return without_state(ctx, HOTSPAN_NO_OPEN_SPAN);  // nothing to end
  if (!e->state) return HOTSPAN_CLOSED;
  return settle(e, fast::end(*e->state, now));
}

// The fast path saw kClosed: release this thread's state for ctx.
HOTSPAN_COLD hotspan_status closed_seen(const Context* ctx) {
  if (CacheEntry* e = entry_for(ctx, false)) mark_closed(e);
  return HOTSPAN_CLOSED;
}

// begin/end keep only the cached-thread fast path inline, so they stay small
// (few saved registers); everything else is in the cold functions above.
hotspan_status api_begin(void* tracer, uint32_t name) {
  const Context* ctx = as_context(tracer);
  if (HOTSPAN_UNLIKELY(ctx == nullptr)) return HOTSPAN_INVALID;
  const FastEntry f = t_fast;
  if (HOTSPAN_UNLIKELY(f.ctx != ctx || f.state == nullptr)) return begin_slow(ctx, name);
  const Status s = fast::begin(*f.state, name, record_now(ctx));
  if (HOTSPAN_UNLIKELY(s == Status::kClosed)) return closed_seen(ctx);
  return to_c(s);
}

hotspan_status api_end(void* tracer) {
  const Context* ctx = as_context(tracer);
  if (HOTSPAN_UNLIKELY(ctx == nullptr)) return HOTSPAN_INVALID;
  const int64_t now = record_now(ctx);
  const FastEntry f = t_fast;
  if (HOTSPAN_UNLIKELY(f.ctx != ctx || f.state == nullptr)) return end_slow(ctx, now);
  const Status s = fast::end(*f.state, now);
  if (HOTSPAN_UNLIKELY(s == Status::kClosed)) return closed_seen(ctx);
  return to_c(s);
}

hotspan_status api_intern(void* tracer, const char* name, size_t len, uint32_t* out_id) {
  const Context* ctx = as_context(tracer);
  if (ctx == nullptr || name == nullptr || out_id == nullptr || len == 0) return HOTSPAN_INVALID;
  auto t = ctx->tracer.lock();
  if (!t || t->closed()) return HOTSPAN_CLOSED;
  *out_id = t->intern(std::string_view(name, len));
  return HOTSPAN_OK;
}

hotspan_status api_track(void* tracer, const char* name, size_t len, int serial,
                         uint32_t* out_track) {
  const Context* ctx = as_context(tracer);
  if (ctx == nullptr || name == nullptr || out_track == nullptr || len == 0) return HOTSPAN_INVALID;
  auto t = ctx->tracer.lock();
  if (!t || t->closed()) return HOTSPAN_CLOSED;
  const uint32_t id = t->track(std::string_view(name, len), serial != 0);
  if (id == 0) return t->closed() ? HOTSPAN_CLOSED : HOTSPAN_INVALID;
  *out_track = id;
  return HOTSPAN_OK;
}

hotspan_status api_async_begin(void* tracer, uint32_t track, uint32_t name, uint64_t* out_token) {
  const Context* ctx = as_context(tracer);
  if (ctx == nullptr || out_token == nullptr) return HOTSPAN_INVALID;
  const int64_t now = record_now(ctx);
  auto t = ctx->tracer.lock();
  if (!t || t->closed()) return HOTSPAN_CLOSED;
  if (name >= t->name_count()) return HOTSPAN_INVALID;
  const uint64_t token = t->async_begin(track, name, now);
  if (token == 0) return t->closed() ? HOTSPAN_CLOSED : HOTSPAN_INVALID;
  *out_token = token;
  return HOTSPAN_OK;
}

hotspan_status api_async_end(void* tracer, uint64_t token) {
  const Context* ctx = as_context(tracer);
  if (ctx == nullptr || token == 0) return HOTSPAN_INVALID;
  const int64_t now = record_now(ctx);
  auto t = ctx->tracer.lock();
  if (!t) return HOTSPAN_CLOSED;
  return to_c(t->async_end(token, now));
}

hotspan_status api_set_thread_name(void* tracer, const char* name, size_t len) {
  const Context* ctx = as_context(tracer);
  if (ctx == nullptr || name == nullptr || len == 0) return HOTSPAN_INVALID;
  CacheEntry* e = entry_for(ctx, true);
  if (e == nullptr || !e->state) return HOTSPAN_CLOSED;
  auto t = ctx->tracer.lock();
  if (!t || t->closed()) {
    mark_closed(e);
    return HOTSPAN_CLOSED;
  }
  t->set_thread_name(*e->state, std::string_view(name, len));
  return HOTSPAN_OK;
}

hotspan_status api_flush_thread(void* tracer) {
  const Context* ctx = as_context(tracer);
  if (ctx == nullptr) return HOTSPAN_INVALID;
  CacheEntry* e = entry_for(ctx, false);
  if (e == nullptr) return without_state(ctx, HOTSPAN_OK);  // nothing to publish
  if (!e->state) return HOTSPAN_CLOSED;
  return settle(e, publish(*e->state));
}

int64_t api_now_ns(void) { return clock::now_ns(); }

double api_now_ms(void* tracer) {
  const Context* ctx = as_context(tracer);
  if (ctx == nullptr) return std::numeric_limits<double>::quiet_NaN();
  return clock::to_ms(clock::now_ns(), ctx->origin_ns);
}

}  // namespace

const hotspan_api_v1* c_api_for(const std::shared_ptr<Tracer>& tracer) {
  if (!tracer) return nullptr;
  // Leaked, like the contexts: consumer threads may still call in while
  // static destructors run at process exit.
  static std::mutex* const mu = new std::mutex;
  static auto* const by_id = new std::unordered_map<uint64_t, Context*>;
  std::lock_guard<std::mutex> lock(*mu);
  Context*& slot = (*by_id)[tracer->id()];
  if (slot == nullptr) {
    auto* ctx = new Context;
    ctx->tracer = tracer;
    ctx->origin_ns = tracer->origin_ns();
    ctx->ticks = tracer->time_unit() == TimeUnit::kTicks;
    hotspan_api_v1& t = ctx->table;
    t.abi_version = HOTSPAN_ABI_VERSION;
    t.struct_size = static_cast<uint32_t>(sizeof(hotspan_api_v1));
    t.tracer = ctx;
    t.intern = api_intern;
    t.begin = api_begin;
    t.end = api_end;
    t.track = api_track;
    t.async_begin = api_async_begin;
    t.async_end = api_async_end;
    t.set_thread_name = api_set_thread_name;
    t.flush_thread = api_flush_thread;
    t.now_ns = api_now_ns;
    t.now_ms = api_now_ms;
    slot = ctx;
  }
  return &slot->table;
}

}  // namespace hotspan
