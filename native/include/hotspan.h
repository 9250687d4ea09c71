/*
 * hotspan.h: the C ABI for recording spans into a hotspan tracer from another
 * native addon's threads. C99 and C++17; standard headers only. Nothing links
 * against hotspan: JS hands your addon `tracer.nativeApi()`, a Node-API
 * External whose data is a `const hotspan_api_v1*`; check `abi_version` and
 * `struct_size` (at least HOTSPAN_API_V1_BASE_SIZE for the entries up to
 * now_ms; entries appended later are there when struct_size covers them),
 * then call through the table from any thread.
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

/* The direct-write area (HOTSPAN_AREA_VERSION), for hotspan.hpp's inline
   Scope: the calling thread's own recording state, which the header reads and
   writes in place instead of calling begin()/end(). Only hotspan.hpp uses it;
   its layout is versioned separately from the table (area_version), so a core
   that changes it stops offering it to older headers, which then call. */
#define HOTSPAN_AREA_VERSION 1

/* One open span (owner thread only). */
typedef struct hotspan_open_v1 {
  int64_t start;
  uint32_t local;
  uint32_t name;
  uint16_t flags; /* nonzero: side data, ended through end() */
} hotspan_open_v1;

/* One stored span, 28 bytes at 4-byte alignment (`start` is an int64_t
   stored with memcpy). */
typedef struct hotspan_record_v1 {
  uint32_t start[2];
  uint32_t duration; /* end - start; 0xFFFFFFFF (too long) only through end() */
  uint32_t local_id;
  uint32_t parent_local;
  uint32_t name;
  uint16_t depth;
  uint16_t flags;
} hotspan_record_v1;

/* A thread's recording state for one tracer. `status` and `holder` are read
   with atomic loads (close() sets status from another thread); the rest
   belongs to the owning thread. After storing record number `written`, the
   writer stores `written` to *written_word with release order (what readers
   acquire), passes the close barrier (a full fence when *writer_fence, else a
   compiler barrier), re-reads `status` and calls area_settle() when it is no
   longer 0 or when written - pushed >= batch. */
typedef struct hotspan_thread_v1 {
  uint8_t status; /* 0: live */
  uint8_t holder; /* nonzero: end() must commit; use the calls */
  uint32_t depth;
  uint32_t capacity;
  uint32_t known_names; /* name ids below this are valid */
  uint32_t next_local;
  uint32_t begin_name_;  /* not for the header */
  uint64_t pushed;
  int64_t anchor_due;    /* a clock reading past it: use the calls */
  hotspan_open_v1* stack;
  hotspan_record_v1* slot; /* next record slot; == end: use the calls */
  hotspan_record_v1* end;
  uint64_t written;
  void* core_timeline_;
  void* core_shared_;
  uint64_t* written_word;
  const uint8_t* writer_fence;
  uint32_t batch;
  uint32_t clock; /* HOTSPAN_CLOCK_TSC (rdtsc) or HOTSPAN_CLOCK_MONOTONIC (ns) */
} hotspan_thread_v1;

#define HOTSPAN_CLOCK_TSC 1
#define HOTSPAN_CLOCK_MONOTONIC 2

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

  /* ---- Appended after now_ms: present when struct_size reaches past them
     (HOTSPAN_API_V1_BASE_SIZE is the size without them). ---- */
  /* HOTSPAN_AREA_VERSION of the area thread_area() lends; 0: none. */
  uint32_t area_version;
  uint32_t reserved_;
  /* Lends the calling thread its area: stores its address in *slot (making
     the thread's timeline, like begin()), and stores NULL there, from this
     thread, when the area stops being valid (the tracer was seen closed, the
     thread exits). *slot must be thread-local and outlive the thread.
     HOTSPAN_CLOSED (and *slot untouched) when the tracer is closed. */
  hotspan_status (*thread_area)(void* tracer, hotspan_thread_v1** slot);
  /* After a record stored through the area, with its `written`: commits or
     queues it when the batch is due, and answers for a tracer closed in the
     meantime (HOTSPAN_OK: the record is in the trace). */
  hotspan_status (*area_settle)(void* tracer, uint64_t written);
} hotspan_api_v1;

/* sizeof(hotspan_api_v1) before the area entries: the smallest table a
   consumer built against this header accepts. */
#define HOTSPAN_API_V1_BASE_SIZE (offsetof(hotspan_api_v1, area_version))

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
