// The WebAssembly module's entry points (exports.cc defines them) and their
// codes, declared from schema/boundary.json, which lib/binding/wasm-core.ts's
// WasmExports comes from too: an entry point defined with other parameters
// than declared here fails to compile, and the TypeScript side is generated
// from the same list (npm run gen; npm test fails on drift).
#pragma once

#include <cstdint>

// <generated from schema/boundary.json by scripts/gen-boundary.mjs (npm run gen)>
enum Format : uint32_t { kChromeJson = 0, kPerfetto = 1 };
enum Status : int32_t {
  kOk = 0,  // ok
  kBadInput = 1,  // malformed columns
  kBadFormat = 2,  // unknown format
  kBadHandle = 3,  // unknown writer handle
};
// f64 per stats row: name, count, total, min, max, mean, p50, p90, p99.
constexpr uint32_t kStatsRowDoubles = 9;

struct QueryColumns;

extern "C" {
// An input buffer of `bytes` bytes (1 for 0) in the module's memory.
__attribute__((export_name("hs_alloc"))) uint8_t* hs_alloc(uint32_t bytes);
// Frees a buffer hs_alloc gave that no call took over.
__attribute__((export_name("hs_free"))) void hs_free(uint8_t* p);
// Where the last call's result is, until the next call.
__attribute__((export_name("hs_result_data"))) const char* hs_result_data();
// The last call's result size in bytes.
__attribute__((export_name("hs_result_size"))) uint32_t hs_result_size();
// One whole document of the columns into the result; takes the input over. The i64s are ns: the origin, then the clock readings. counts: the address of 5 doubles (produced, kept, released, overwritten, dropped), or 0 for none. pid: the process's (0: the writers' default, 1). name: the process's name (UTF-8, taken over; name_size 0: the writers' default, "hotspan").
__attribute__((export_name("hs_write"))) int32_t hs_write(uint8_t* input, uint32_t size, uint32_t format, int64_t origin_ns, int64_t monotonic_ns, int64_t realtime_ns, int64_t boottime_ns, const double* counts, uint32_t pid, uint8_t* name, uint32_t name_size);
// An incremental document: its handle (0: unknown format).
__attribute__((export_name("hs_writer_begin"))) uint32_t hs_writer_begin(uint32_t format, int64_t origin_ns, int64_t monotonic_ns, int64_t realtime_ns, int64_t boottime_ns);
// Appends a batch of columns to an incremental document (takes the input over); the bytes made are the result.
__attribute__((export_name("hs_writer_append"))) int32_t hs_writer_append(uint32_t handle, uint8_t* input, uint32_t size);
// The process of the batches appended next to an incremental document (DocumentWriter::set_process): its pid and name (UTF-8, taken over; name_size 0: the writers' default, "hotspan").
__attribute__((export_name("hs_writer_process"))) int32_t hs_writer_process(uint32_t handle, uint32_t pid, uint8_t* name, uint32_t name_size);
// Finishes an incremental document; its last bytes are the result.
__attribute__((export_name("hs_writer_finish"))) int32_t hs_writer_finish(uint32_t handle);
// The stats rows of the columns into the result, as f64 rows of the stats row's width (times in ns); takes the input over.
__attribute__((export_name("hs_stats"))) int32_t hs_stats(uint8_t* input, uint32_t size);
// Takes the input over; returns a query handle (0: malformed columns).
__attribute__((export_name("hs_query_open"))) QueryColumns* hs_query_open(uint8_t* input, uint32_t size);
// One step of native/core/read/query_call.h into the result as f64; name_size 0xFFFFFFFF: no name.
__attribute__((export_name("hs_query"))) int32_t hs_query(const QueryColumns* q, const double* args, const char* name, uint32_t name_size);
// The W3C ids of the columns' records under a head sampler; takes both buffers over (contexts: 6 u64 each, 0 when count is 0).
__attribute__((export_name("hs_span_ids"))) int32_t hs_span_ids(uint8_t* input, uint32_t size, uint64_t* contexts, uint32_t count, uint64_t salt, uint64_t sampler);
// [wire id, trace hi, trace lo, trace flags] of a span id as a root under a head sampler.
__attribute__((export_name("hs_root_ids"))) int32_t hs_root_ids(uint64_t span, uint64_t salt, uint64_t sampler);
// An OTLP encoder under a head sampler and a tail keep: takes the resource buffer over; returns a handle (0: malformed).
__attribute__((export_name("hs_otlp_open"))) uint32_t hs_otlp_open(uint8_t* resource, uint32_t size, uint32_t encoding, int64_t unix_offset_ns, uint64_t salt, uint64_t sampler, uint64_t keep);
// A span name (UTF-8, taken over) whose trace the encoder's tail keep keeps whole; 0 ok, else a status.
__attribute__((export_name("hs_otlp_keep_name"))) int32_t hs_otlp_keep_name(uint32_t handle, uint8_t* name, uint32_t size);
// One OTLP read: takes the columns and the contexts over; read_through_ms: the read watermark (ms on the columns' axis; Infinity: none); result: u32 spans, u32 held, u32 sampled out, u32 keep timed out, the request.
__attribute__((export_name("hs_otlp_next"))) int32_t hs_otlp_next(uint32_t handle, uint8_t* input, uint32_t size, uint8_t* contexts, uint32_t contexts_size, uint32_t count, uint32_t max_spans, uint32_t final, uint32_t unread, double read_through_ms);
// The recording core: a tracer (times given as ms on the performance.now() axis from origin_ns, CLOCK_MONOTONIC; the budget in bytes, on_full 0 overwrite / 1 drop; its id salt, head sampler word (record/sampler.h) and tail keep word (record/tail_keep.h)); its handle (0: bad on_full).
__attribute__((export_name("hs_rec_open"))) uint32_t hs_rec_open(double memory_limit, uint32_t on_full, int64_t origin_ns, uint64_t id_salt, uint64_t sampler, uint64_t keep);
// Closes a tracer: later calls record nothing and return CLOSED; its records stay readable.
__attribute__((export_name("hs_rec_close"))) void hs_rec_close(uint32_t tracer);
// Closes a tracer and frees its handle and records.
__attribute__((export_name("hs_rec_free"))) void hs_rec_free(uint32_t tracer);
// Attaches a JS thread's timeline named by the buffer (taken over); timeline 0 numbers it as the tracer's own, else it is a joined thread's tracer-wide id (hs_rec_first_joined_timeline and up, below 2^21); the thread's handle (0: closed or unknown tracer, or an id not accepted).
__attribute__((export_name("hs_rec_thread"))) uint32_t hs_rec_thread(uint32_t tracer, uint32_t timeline, uint8_t* name, uint32_t size);
// The first timeline id of a joined thread (record/registry.h): a tracer's own timelines stay below it, so a shared tracer's counter of joined threads' ids starts here.
__attribute__((export_name("hs_rec_first_joined_timeline"))) uint32_t hs_rec_first_joined_timeline();
// Ends the thread's open spans as abandoned at `now`, marks its timeline exited and frees the thread's handle; a core status.
__attribute__((export_name("hs_rec_detach"))) int32_t hs_rec_detach(uint32_t tracer, uint32_t thread, double now_ms);
// The id of the name in the buffer (taken over); 0xFFFFFFFF for an unknown tracer.
__attribute__((export_name("hs_rec_intern"))) uint32_t hs_rec_intern(uint32_t tracer, uint8_t* name, uint32_t size);
// A span begins on the thread; a core status.
__attribute__((export_name("hs_rec_begin"))) int32_t hs_rec_begin(uint32_t thread, uint32_t name, double now_ms);
// A span begins on the thread with the attribute JSON in the buffer (taken over); a core status.
__attribute__((export_name("hs_rec_begin_attrs"))) int32_t hs_rec_begin_attrs(uint32_t thread, uint32_t name, double now_ms, uint8_t* attrs, uint32_t size);
// A span begins under a given context (the core's begin_in_context): its trace and parent wire id, W3C flags and tracestate (buffer taken over), and a tracer-wide parent span id (0: none); attributes as hs_rec_begin_attrs; a core status.
__attribute__((export_name("hs_rec_begin_context"))) int32_t hs_rec_begin_context(uint32_t thread, uint32_t name, double now_ms, uint8_t* attrs, uint32_t size, uint64_t trace_hi, uint64_t trace_lo, uint64_t parent_wire, uint64_t parent_span, uint32_t flags, uint8_t* tracestate, uint32_t tracestate_size);
// The W3C ids of the thread's innermost open span at `out` (6 u64): trace hi, trace lo, span, parent, flags | resolved << 8, its tracer-wide span id (0: none open); a core status.
__attribute__((export_name("hs_rec_open_ids"))) int32_t hs_rec_open_ids(uint32_t thread, uint64_t* out);
// The thread's open-span depth (0: none, or an unknown thread).
__attribute__((export_name("hs_rec_depth"))) uint32_t hs_rec_depth(uint32_t thread);
// The local id of the thread's innermost open span (0: none).
__attribute__((export_name("hs_rec_innermost"))) uint32_t hs_rec_innermost(uint32_t thread);
// The thread's innermost span ends, with extra span flags; a core status.
__attribute__((export_name("hs_rec_end"))) int32_t hs_rec_end(uint32_t thread, double now_ms, uint32_t flags);
// The async track named by the buffer (taken over), made on first use; its id (0: closed, or a track of the other kind).
__attribute__((export_name("hs_rec_track"))) uint32_t hs_rec_track(uint32_t tracer, uint8_t* name, uint32_t size, uint32_t serial);
// hs_rec_track under an explicit tracer-wide timeline id (0: this tracer's own numbering; else any id below 2^21 not taken), as a joined thread's instance and the tracer it joined number a shared track; its id (0: closed, a track of the other kind, of that name under another id, or an id not accepted).
__attribute__((export_name("hs_rec_track_at"))) uint32_t hs_rec_track_at(uint32_t tracer, uint8_t* name, uint32_t size, uint32_t serial, uint32_t id);
// A joined thread's instance: the next async span begun on the track takes the local id given (by the shared tracer, so its span id is the tracer-wide one); a core status (Invalid: unknown track, or 0).
__attribute__((export_name("hs_rec_async_next_local"))) int32_t hs_rec_async_next_local(uint32_t tracer, uint32_t track, uint32_t local);
// The groups timeline, made (if not yet) under the explicit id given (0: this tracer's own numbering; else as hs_rec_thread's), so a joined thread's instance keeps its own ids clear of the shared tracer's track ids; its id (0: closed, or an id not accepted).
__attribute__((export_name("hs_rec_groups_at"))) uint32_t hs_rec_groups_at(uint32_t tracer, uint32_t id);
// An async span begins on a track, with the attribute JSON in the buffer (taken over; size 0: none); its token (0: closed or unknown track).
__attribute__((export_name("hs_rec_async_begin"))) uint64_t hs_rec_async_begin(uint32_t tracer, uint32_t track, uint32_t name, double now_ms, uint8_t* attrs, uint32_t size);
// hs_rec_async_begin under a given context (as hs_rec_begin_context); its token (0: closed or unknown track).
__attribute__((export_name("hs_rec_async_begin_context"))) uint64_t hs_rec_async_begin_context(uint32_t tracer, uint32_t track, uint32_t name, double now_ms, uint8_t* attrs, uint32_t size, uint64_t trace_hi, uint64_t trace_lo, uint64_t parent_wire, uint64_t parent_span, uint32_t flags, uint8_t* tracestate, uint32_t tracestate_size);
// An async span ends with changes: a start and an end in ms (not finite: the begin's, `now`), a name id (0xFFFFFFFF: the begin's), attributes replacing the begin's when has_attrs; a core status.
__attribute__((export_name("hs_rec_async_finish"))) int32_t hs_rec_async_finish(uint32_t tracer, uint64_t token, double now_ms, uint32_t flags, double start_ms, double end_ms, uint32_t name, uint32_t has_attrs, uint8_t* attrs, uint32_t size);
// An async span ends, with extra span flags; a core status.
__attribute__((export_name("hs_rec_async_end"))) int32_t hs_rec_async_end(uint32_t tracer, uint64_t token, double now_ms, uint32_t flags);
// The async spans still open; result: f64 token, f64 name id per span; a core status.
__attribute__((export_name("hs_rec_open_async"))) int32_t hs_rec_open_async(uint32_t tracer);
// A span group begins, with the attribute JSON in the buffer (taken over; size 0: none); a core status.
__attribute__((export_name("hs_rec_group_begin"))) int32_t hs_rec_group_begin(uint32_t tracer, uint32_t name, double now_ms, uint8_t* attrs, uint32_t size);
// The innermost span group ends; a core status.
__attribute__((export_name("hs_rec_group_end"))) int32_t hs_rec_group_end(uint32_t tracer, double now_ms);
// How many span groups are open.
__attribute__((export_name("hs_rec_open_groups"))) uint32_t hs_rec_open_groups(uint32_t tracer);
// A sample of the counter named by the buffer (taken over) at `now` (a core status).
__attribute__((export_name("hs_rec_counter"))) int32_t hs_rec_counter(uint32_t tracer, uint8_t* name, uint32_t size, double now_ms, double value);
// Flushes, then writes 5 doubles at `out`: produced, kept, released, overwritten, dropped; a core status.
__attribute__((export_name("hs_rec_counts"))) int32_t hs_rec_counts(uint32_t tracer, double* out);
// Flushes; result: u32 timeline count T, u32 0, f64[6T] (id, produced, kept, released, overwritten, dropped), u32[T] end offsets of the names, then the names (UTF-8); a core status.
__attribute__((export_name("hs_rec_timelines"))) int32_t hs_rec_timelines(uint32_t tracer);
// A joined thread's hand-over source over the tracer it records in (read/handover_batch.h): a handle, 0 for an unknown tracer or no consumer slot left.
__attribute__((export_name("hs_rec_handover_open"))) uint32_t hs_rec_handover_open(uint32_t tracer);
// Result: a hand-over batch of the records committed since the last take (at most max_records; a joined thread holds, so its records commit as they end), the names interned and the spans lost since; returns the records in it.
__attribute__((export_name("hs_rec_handover_take"))) uint32_t hs_rec_handover_take(uint32_t source, uint32_t max_records);
// Result: the batch (the buffer, taken over) without its records: its names and lost count, all a refused batch carries (read/handover_batch.h strip_records); a core status (Invalid: not a whole batch).
__attribute__((export_name("hs_rec_handover_strip"))) int32_t hs_rec_handover_strip(uint8_t* batch, uint32_t size);
// Frees the source's handle: its records no longer wait for it.
__attribute__((export_name("hs_rec_handover_free"))) void hs_rec_handover_free(uint32_t source);
// A timeline (named by the buffer, taken over) for a joined thread's handed-over records (record/imported_thread.h), under the tracer-wide id its own instance numbers its spans with (hs_rec_first_joined_timeline and up, below 2^21): a handle, 0 for an unknown or closed tracer or an id not accepted (below the first, 2^21 or above, or taken).
__attribute__((export_name("hs_rec_import_thread"))) uint32_t hs_rec_import_thread(uint32_t tracer, uint32_t timeline, uint8_t* name, uint32_t size);
// Stores a hand-over batch (the buffer, taken over) on the imported thread's timeline under its tracer's budget (a batch hs_rec_handover_strip cut carries its names and lost count only: back-pressure refused its records, which the sender's hub counted lost); a core status (Invalid: not a whole batch).
__attribute__((export_name("hs_rec_import"))) int32_t hs_rec_import(uint32_t imported, uint8_t* batch, uint32_t size);
// Marks the imported thread's timeline exited and frees its handle; a core status.
__attribute__((export_name("hs_rec_import_exited"))) int32_t hs_rec_import_exited(uint32_t imported);
// Flushes; result: the committed records in the columns layout of native/wasm/snapshot_columns.h, times as ms from the tracer's origin, then its stored contexts; a core status.
__attribute__((export_name("hs_rec_snapshot"))) int32_t hs_rec_snapshot(uint32_t tracer);
// Opens the tracer's OTLP export read (export/export_cursor.h) at what it holds now; INVALID when one is open or every consumer slot is taken. A core status.
__attribute__((export_name("hs_rec_export_open"))) int32_t hs_rec_export_open(uint32_t tracer);
// Flushes; result: up to max_records records committed since the last take, in the columns layout of hs_rec_snapshot (names: the whole table); at `out` 3 doubles: records lost before they were taken (since the last take), records committed and not taken, the read watermark (ms on the columns' axis: every record that ended at or before it was taken; Infinity: none left). A core status.
__attribute__((export_name("hs_rec_export_take"))) int32_t hs_rec_export_take(uint32_t tracer, double max_records, double* out);
// Closes the tracer's export read: its chunks no longer wait for it.
__attribute__((export_name("hs_rec_export_close"))) void hs_rec_export_close(uint32_t tracer);
// Flushes, then one whole document of the tracer's records into the result, with its counts; the clock readings are the caller's.
__attribute__((export_name("hs_rec_write"))) int32_t hs_rec_write(uint32_t tracer, uint32_t format, int64_t monotonic_ns, int64_t realtime_ns, int64_t boottime_ns);
// Names the process in the tracer's documents (hs_rec_write) by the buffer (taken over; UTF-8, 1 to 1024 bytes; default "hotspan"); a core status (INVALID: an unknown tracer or a name out of bounds).
__attribute__((export_name("hs_rec_process_name"))) int32_t hs_rec_process_name(uint32_t tracer, uint8_t* name, uint32_t size);
// A span name (UTF-8, taken over) whose trace the tracer's tail keep keeps whole in its documents (hs_rec_write, read/trace_keep.h); a core status (INVALID: an unknown tracer or an empty name).
__attribute__((export_name("hs_rec_keep_name"))) int32_t hs_rec_keep_name(uint32_t tracer, uint8_t* name, uint32_t size);
// The records the last hs_rec_write wrote (a sampling tracer's: those of its kept traces).
__attribute__((export_name("hs_rec_written"))) double hs_rec_written();
}  // extern "C"
// </generated>
