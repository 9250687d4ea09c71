/*
 * hotspan.h: the C ABI for recording spans into a hotspan tracer from another
 * native addon's threads. C99 and C++17; standard headers only. Nothing links
 * against hotspan: JS hands your addon `tracer.nativeApi()`, a Node-API
 * External whose data is a `const hotspan_api_v1*`; check `abi_version` and
 * `struct_size`, then call through the table from any thread.
 *
 * Every entry point is safe from any thread at any time, including after the
 * tracer was closed: it then records nothing and returns HOTSPAN_CLOSED. The
 * table itself stays valid for the life of the process.
 */
#ifndef HOTSPAN_H_
#define HOTSPAN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HOTSPAN_ABI_VERSION 1

/* <generated from schema/boundary.json by scripts/gen-boundary.mjs (npm run gen)> */
typedef enum hotspan_status {
  HOTSPAN_OK = 0, /* done */
  HOTSPAN_CLOSED = 1, /* the tracer was closed; nothing recorded */
  HOTSPAN_NO_OPEN_SPAN = 2, /* end() with no open span on this thread; nothing changed */
  HOTSPAN_INVALID = 3 /* bad argument: unknown name, track, token or thread state, NULL pointer */
} hotspan_status;
/* </generated> */

typedef struct hotspan_api_v1 {
  uint32_t abi_version; /* HOTSPAN_ABI_VERSION the table implements */
  uint32_t struct_size; /* sizeof(hotspan_api_v1) of the implementation */
  void* tracer;         /* opaque; pass back as the first argument */

  /* Interns a name (need not be NUL-terminated) and returns its id.
     HOTSPAN_INVALID for an empty name (len 0). */
  hotspan_status (*intern)(void* tracer, const char* name, size_t len, uint32_t* out_id);
  /* A span on the calling thread; spans nest strictly per thread. The
     thread's timeline is made on its first begin(). end() returns
     HOTSPAN_NO_OPEN_SPAN when this thread has no open span. */
  hotspan_status (*begin)(void* tracer, uint32_t name_id);
  hotspan_status (*end)(void* tracer);
  /* A named async track (serial != 0: each span starts no earlier than the
     previous one on the track ended). Idempotent by name; HOTSPAN_INVALID
     for an empty name or a name already used by a track of the other kind
     (serial vs concurrent). */
  hotspan_status (*track)(void* tracer, const char* name, size_t len, int serial,
                          uint32_t* out_track);
  /* An async span: begins on one thread, ends on any thread. */
  hotspan_status (*async_begin)(void* tracer, uint32_t track, uint32_t name_id,
                                uint64_t* out_token);
  hotspan_status (*async_end)(void* tracer, uint64_t token);
  /* Display name of the calling thread's timeline ("native: <name>").
     HOTSPAN_INVALID for an empty name. */
  hotspan_status (*set_thread_name)(void* tracer, const char* name, size_t len);
  /* Publishes the calling thread's recorded spans to the tracer's queue now
     rather than at the next batch boundary or thread exit. */
  hotspan_status (*flush_thread)(void* tracer);
  /* The tracer's clock: raw monotonic ns, and ms on the tracer's
     performance.now() axis (still valid after close; NaN for a NULL
     `tracer`). */
  int64_t (*now_ns)(void);
  double (*now_ms)(void* tracer);
} hotspan_api_v1;

#ifdef __cplusplus
} /* extern "C" */

/* RAII scope: begins in the constructor, ends in the destructor. */
namespace hotspan_abi {
class Scope {
 public:
  Scope(const hotspan_api_v1* api, uint32_t name_id) : api_(api) {
    ok_ = api_ && api_->begin(api_->tracer, name_id) == HOTSPAN_OK;
  }
  ~Scope() {
    if (ok_) api_->end(api_->tracer);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const hotspan_api_v1* api_;
  bool ok_;
};
}  // namespace hotspan_abi

#define HOTSPAN_CONCAT_INNER_(a, b) a##b
#define HOTSPAN_CONCAT_(a, b) HOTSPAN_CONCAT_INNER_(a, b)
/* HOTSPAN_SCOPE(api, name_id); records a span until the end of the block. */
#define HOTSPAN_SCOPE(api, name_id) \
  ::hotspan_abi::Scope HOTSPAN_CONCAT_(hotspan_scope_, __LINE__)((api), (name_id))
#else
/* C: HOTSPAN_BEGIN/HOTSPAN_END around a block. */
#define HOTSPAN_BEGIN(api, name_id) ((api)->begin((api)->tracer, (name_id)))
#define HOTSPAN_END(api) ((api)->end((api)->tracer))
#endif

#endif /* HOTSPAN_H_ */
