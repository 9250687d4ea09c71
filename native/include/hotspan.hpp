/*
 * hotspan.hpp: C++17 helpers over hotspan's C ABI (hotspan.h) for a native
 * addon's own threads. Standard headers only; nothing links against hotspan,
 * and hotspan.h's ABI is unchanged (this header only calls through the table).
 *
 *   // once, on the JS thread, with the External from tracer.nativeApi():
 *   void* data; napi_get_value_external(env, value, &data);
 *   if (hotspan::attach(static_cast<const hotspan_api_v1*>(data)) != hotspan::Attach::kOk) ...
 *
 *   // anywhere, on any thread:
 *   void decode(Chunk& c) {
 *     HOTSPAN_SCOPE("decode");     // a span until the end of the block
 *     ...
 *   }
 *
 * Binding. attach() binds a table for this addon (one shared object: the
 * binding's variables have hidden visibility, so two addons in one process
 * each have their own). It checks abi_version and struct_size and publishes
 * the table with a release store; Scope reads it with an acquire load. With
 * no table attached, or once the attached tracer answered HOTSPAN_CLOSED,
 * a Scope is two loads and a branch and records nothing. A later attach() of
 * another table (a new Tracer) takes effect for scopes begun after it; a
 * scope already open ends on the table it began on.
 *
 * Names. A name id is only meaningful to the table that interned it, so each
 * Name (and each HOTSPAN_SCOPE call site, which holds a static Name) caches
 * one 64-bit word: the id together with the "epoch" of the table it came
 * from. Every distinct table attached in this addon gets its own epoch
 * (attaching the same table again reuses it; one small record per distinct
 * table, kept, like the table, for the life of the process), so a site
 * interned under table A is re-interned, one intern() call, on its first use
 * under table B, and again on its first use after switching back (intern is
 * idempotent: the same id as before). The word is constant-initialized (no
 * guard) and read with one acquire load. On a concurrent first use several
 * threads may each call intern() once; they all get, and store, the same id:
 * one name in the trace, no lock on any path. (A site in an inline function
 * that two addons both compile with default visibility may be merged into
 * one by the dynamic linker; give such helpers internal linkage.)
 *
 * Later: a direct-write fast path (a thread-local record area the header
 * writes into without a call) would be an addition to the table (a larger
 * struct_size) that attach() detects and Scope's inline constructor and
 * destructor use. User code (HOTSPAN_SCOPE, Scope, Name, AsyncScope) does
 * not name the table's entries, so it would only need a rebuild.
 *
 * Keeps hotspan.h's two-argument HOTSPAN_SCOPE(api, name_id) (hotspan_abi::Scope)
 * working: HOTSPAN_SCOPE picks the form by its number of arguments.
 */
#ifndef HOTSPAN_HPP_
#define HOTSPAN_HPP_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <utility>

#include "hotspan.h"

#if defined(__GNUC__) && !defined(_WIN32)
#define HOTSPAN_HPP_HIDDEN_ __attribute__((visibility("hidden")))
#define HOTSPAN_HPP_COLD_ __attribute__((noinline, cold))
#define HOTSPAN_HPP_UNLIKELY_(x) __builtin_expect(!!(x), 0)
#else
#define HOTSPAN_HPP_HIDDEN_
#define HOTSPAN_HPP_COLD_
#define HOTSPAN_HPP_UNLIKELY_(x) (x)
#endif

namespace hotspan {

/** What attach() found. */
enum class Attach {
  kOk = 0,
  kNullTable,   // the pointer is null
  kAbiVersion,  // abi_version is not HOTSPAN_ABI_VERSION
  kTableSize,   // struct_size is smaller than this header's hotspan_api_v1
};

/** A sentence for an Attach value, for an error message. */
inline const char* describe(Attach a) noexcept {
  switch (a) {
    case Attach::kOk:
      return "attached";
    case Attach::kNullTable:
      return "hotspan: the table pointer is null (pass the External's data from tracer.nativeApi())";
    case Attach::kAbiVersion:
      return "hotspan: the table's ABI version is not the one this addon was built for: rebuild it";
    case Attach::kTableSize:
      return "hotspan: the table is smaller than this addon's hotspan.h expects: rebuild it";
  }
  return "hotspan: unknown attach result";
}

namespace detail {

// One per distinct table attached in this addon; never freed (the table
// itself lives as long as the process), so a pointer or epoch is never reused.
struct Binding {
  const hotspan_api_v1* api;
  uint32_t epoch;  // != 0; unique per table within this addon
  // Set once any call on this table answered HOTSPAN_CLOSED for the tracer
  // (closing is permanent): scopes then stop calling through it.
  mutable std::atomic<bool> closed{false};
  Binding* next;
};

// Constant-initialized, hidden: per addon, no guard on the hot path.
inline HOTSPAN_HPP_HIDDEN_ std::atomic<const Binding*> g_current{nullptr};
inline HOTSPAN_HPP_HIDDEN_ std::mutex g_mu;        // guards g_all and g_epochs
inline HOTSPAN_HPP_HIDDEN_ Binding* g_all = nullptr;
inline HOTSPAN_HPP_HIDDEN_ uint32_t g_epochs = 0;

inline const Binding* current() noexcept { return g_current.load(std::memory_order_acquire); }

// The binding to use now, or null when none or its tracer closed.
inline const Binding* live() noexcept {
  const Binding* b = current();
  if (HOTSPAN_HPP_UNLIKELY_(b == nullptr || b->closed.load(std::memory_order_relaxed))) return nullptr;
  return b;
}

// begin() or async_begin() answered HOTSPAN_CLOSED. That can also mean only
// that this thread is being torn down, so ask intern() (of a name the table
// already has), which answers for the tracer.
HOTSPAN_HPP_COLD_ inline void confirm_closed(const Binding* b, std::string_view name) noexcept {
  uint32_t id = 0;
  if (b->api->intern(b->api->tracer, name.data(), name.size(), &id) == HOTSPAN_CLOSED) {
    b->closed.store(true, std::memory_order_relaxed);
  }
}

// A string interned (by `make`) once per table, cached as (epoch << 32 | id).
class Interned {
 public:
  constexpr Interned(const char* s, size_t len) noexcept : s_(s), len_(len) {}
  Interned(const Interned&) = delete;
  Interned& operator=(const Interned&) = delete;

  std::string_view str() const noexcept { return std::string_view(s_, len_); }

 protected:
  template <class Make>
  bool id_for(const Binding* b, uint32_t* out, Make make) const noexcept {
    const uint64_t v = cache_.load(std::memory_order_acquire);
    if (static_cast<uint32_t>(v >> 32) == b->epoch) {
      *out = static_cast<uint32_t>(v);
      return true;
    }
    return fill(b, out, make);
  }

  const char* s_;
  size_t len_;

 private:
  template <class Make>
  HOTSPAN_HPP_COLD_ bool fill(const Binding* b, uint32_t* out, Make make) const noexcept {
    uint32_t id = 0;
    const hotspan_status s = make(b->api, s_, len_, &id);
    if (s != HOTSPAN_OK) {
      if (s == HOTSPAN_CLOSED) b->closed.store(true, std::memory_order_relaxed);
      return false;
    }
    // Racing threads store the same id (intern/track are idempotent).
    cache_.store((static_cast<uint64_t>(b->epoch) << 32) | id, std::memory_order_release);
    *out = id;
    return true;
  }

  mutable std::atomic<uint64_t> cache_{0};  // epoch 0: never interned
};

}  // namespace detail

/**
 * Binds `api` (the data of the External from tracer.nativeApi()) for this
 * addon. Thread-safe; call it again with another tracer's table to switch.
 * On a mismatch nothing changes and the result says why (describe()).
 */
inline Attach attach(const hotspan_api_v1* api) {
  if (api == nullptr) return Attach::kNullTable;
  if (api->abi_version != HOTSPAN_ABI_VERSION) return Attach::kAbiVersion;
  if (api->struct_size < sizeof(hotspan_api_v1)) return Attach::kTableSize;
  std::lock_guard<std::mutex> lock(detail::g_mu);
  detail::Binding* b = detail::g_all;
  while (b != nullptr && b->api != api) b = b->next;
  if (b == nullptr) {
    b = new detail::Binding{api, ++detail::g_epochs, {false}, detail::g_all};
    detail::g_all = b;
  }
  detail::g_current.store(b, std::memory_order_release);
  return Attach::kOk;
}

/** Unbinds: later scopes record nothing (open ones still end). */
inline void detach() noexcept { detail::g_current.store(nullptr, std::memory_order_release); }

/** The table bound now, or null. */
inline const hotspan_api_v1* attached() noexcept {
  const detail::Binding* b = detail::current();
  return b == nullptr ? nullptr : b->api;
}

/**
 * A span name, interned lazily into whichever table is attached when it is
 * first used (and again for each other table). Keep it static: a
 * namespace-scope or function-local `static hotspan::Name n("decode");` is
 * constant-initialized. The string must outlive the Name (a literal does).
 */
class Name : public detail::Interned {
 public:
  template <size_t N>
  constexpr explicit Name(const char (&s)[N]) noexcept : Interned(s, N - 1) {}
  constexpr Name(const char* s, size_t len) noexcept : Interned(s, len) {}

  /** This name's id in `b`'s table; false when it cannot be had (closed, empty). */
  bool id(const detail::Binding* b, uint32_t* out) const noexcept {
    return id_for(b, out, [](const hotspan_api_v1* api, const char* s, size_t len, uint32_t* id) {
      return api->intern(api->tracer, s, len, id);
    });
  }
};

/**
 * An async track (a timeline "track: <name>"); serial: each span on it starts
 * no earlier than the previous one ended. Static, like Name.
 */
class Track : public detail::Interned {
 public:
  template <size_t N>
  constexpr explicit Track(const char (&s)[N], bool serial = false) noexcept
      : Interned(s, N - 1), serial_(serial) {}

  bool id(const detail::Binding* b, uint32_t* out) const noexcept {
    const int serial = serial_ ? 1 : 0;
    return id_for(b, out, [serial](const hotspan_api_v1* api, const char* s, size_t len, uint32_t* id) {
      return api->track(api->tracer, s, len, serial, id);
    });
  }

 private:
  bool serial_;
};

/**
 * A span on the calling thread from construction to destruction (spans nest
 * per thread). Records nothing when no table is attached, the tracer is
 * closed, or begin() fails; the destructor then does nothing.
 */
class Scope {
 public:
  explicit Scope(const Name& name) noexcept {
    const detail::Binding* b = detail::live();
    if (b == nullptr) return;
    uint32_t id;
    if (!name.id(b, &id)) return;
    const hotspan_status s = b->api->begin(b->api->tracer, id);
    if (HOTSPAN_HPP_UNLIKELY_(s != HOTSPAN_OK)) {
      if (s == HOTSPAN_CLOSED) detail::confirm_closed(b, name.str());
      return;
    }
    api_ = b->api;
  }
  Scope(const Name&&) = delete;  // a temporary Name would intern on every call
  ~Scope() {
    if (api_ != nullptr) api_->end(api_->tracer);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  /** Whether this scope's span was begun (and so will be ended). */
  bool recording() const noexcept { return api_ != nullptr; }

 private:
  const hotspan_api_v1* api_ = nullptr;  // the table it began on
};

/**
 * An async span on a track: begun in the constructor, ended by end() or the
 * destructor, on any thread. Movable (hand it to the thread that finishes
 * the work), not copyable; a moved-from AsyncScope ends nothing.
 */
class AsyncScope {
 public:
  AsyncScope() noexcept = default;
  AsyncScope(const Track& track, const Name& name) noexcept {
    const detail::Binding* b = detail::live();
    if (b == nullptr) return;
    uint32_t t, n;
    if (!track.id(b, &t) || !name.id(b, &n)) return;
    uint64_t token = 0;
    const hotspan_status s = b->api->async_begin(b->api->tracer, t, n, &token);
    if (s != HOTSPAN_OK) {
      if (s == HOTSPAN_CLOSED) detail::confirm_closed(b, name.str());
      return;
    }
    api_ = b->api;
    token_ = token;
  }
  AsyncScope(const Track&&, const Name&) = delete;
  AsyncScope(const Track&, const Name&&) = delete;
  AsyncScope(AsyncScope&& o) noexcept : api_(std::exchange(o.api_, nullptr)), token_(o.token_) {}
  AsyncScope& operator=(AsyncScope&& o) noexcept {
    if (this != &o) {
      end();
      api_ = std::exchange(o.api_, nullptr);
      token_ = o.token_;
    }
    return *this;
  }
  AsyncScope(const AsyncScope&) = delete;
  AsyncScope& operator=(const AsyncScope&) = delete;
  ~AsyncScope() { end(); }

  /**
   * Ends the span now, on the calling thread. Later calls (and the
   * destructor) do nothing. HOTSPAN_OK when the span is in the trace;
   * HOTSPAN_INVALID when nothing was open.
   */
  hotspan_status end() noexcept {
    const hotspan_api_v1* api = std::exchange(api_, nullptr);
    return api == nullptr ? HOTSPAN_INVALID : api->async_end(api->tracer, token_);
  }

  /** Whether a span is open (begun and not yet ended or moved from). */
  bool recording() const noexcept { return api_ != nullptr; }

 private:
  const hotspan_api_v1* api_ = nullptr;
  uint64_t token_ = 0;
};

/**
 * Names the calling thread's timeline in the attached tracer ("native:
 * <name>"). HOTSPAN_CLOSED when nothing is attached. Name a thread after
 * attach(): a tracer attached later sees it unnamed.
 */
inline hotspan_status set_thread_name(std::string_view name) noexcept {
  const detail::Binding* b = detail::live();
  if (b == nullptr) return HOTSPAN_CLOSED;
  return b->api->set_thread_name(b->api->tracer, name.data(), name.size());
}

/** Publishes the calling thread's recorded spans now (see hotspan.h). */
inline hotspan_status flush_thread() noexcept {
  const detail::Binding* b = detail::live();
  if (b == nullptr) return HOTSPAN_CLOSED;
  return b->api->flush_thread(b->api->tracer);
}

}  // namespace hotspan

#define HOTSPAN_HPP_CAT_INNER_(a, b) a##b
#define HOTSPAN_HPP_CAT_(a, b) HOTSPAN_HPP_CAT_INNER_(a, b)

/* HOTSPAN_SCOPE("name"): a span until the end of the enclosing block; the
   name (a string literal) is interned once per call site and table.
   HOTSPAN_SCOPE(api, name_id): hotspan.h's form, unchanged. */
#undef HOTSPAN_SCOPE
#define HOTSPAN_SCOPE(...) HOTSPAN_HPP_PICK_(__VA_ARGS__, HOTSPAN_HPP_SCOPE2_, HOTSPAN_HPP_SCOPE1_, )(__VA_ARGS__)
#define HOTSPAN_HPP_PICK_(a, b, form, ...) form
#define HOTSPAN_HPP_SCOPE1_(name)                                                          \
  static_assert(sizeof("" name "") > 1, "HOTSPAN_SCOPE: the name must not be empty");     \
  static const ::hotspan::Name HOTSPAN_HPP_CAT_(hotspan_name_, __LINE__)("" name ""); \
  const ::hotspan::Scope HOTSPAN_HPP_CAT_(hotspan_scope_, __LINE__)(HOTSPAN_HPP_CAT_(hotspan_name_, __LINE__))
#define HOTSPAN_HPP_SCOPE2_(api, name_id) \
  ::hotspan_abi::Scope HOTSPAN_HPP_CAT_(hotspan_scope_, __LINE__)((api), (name_id))

/* HOTSPAN_ASYNC("track", "name"): an AsyncScope begun now on a concurrent
   track; both strings are literals, interned once per call site and table.
   `auto span = HOTSPAN_ASYNC("gpu", "upload"); ... span.end();` */
#define HOTSPAN_ASYNC(track, name)                               \
  ([]() noexcept {                                               \
    static const ::hotspan::Track hotspan_track_("" track ""); \
    static const ::hotspan::Name hotspan_name_("" name "");    \
    return ::hotspan::AsyncScope(hotspan_track_, hotspan_name_); \
  }())

#endif /* HOTSPAN_HPP_ */
