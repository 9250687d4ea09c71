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
// One whole document of the columns into the result; takes the input over. The i64s are ns: the origin, then the clock readings. counts: the address of 5 doubles (produced, kept, released, overwritten, dropped), or 0 for none.
__attribute__((export_name("hs_write"))) int32_t hs_write(uint8_t* input, uint32_t size, uint32_t format, int64_t origin_ns, int64_t monotonic_ns, int64_t realtime_ns, int64_t boottime_ns, const double* counts);
// An incremental document: its handle (0: unknown format).
__attribute__((export_name("hs_writer_begin"))) uint32_t hs_writer_begin(uint32_t format, int64_t origin_ns, int64_t monotonic_ns, int64_t realtime_ns, int64_t boottime_ns);
// Appends a batch of columns to an incremental document (takes the input over); the bytes made are the result.
__attribute__((export_name("hs_writer_append"))) int32_t hs_writer_append(uint32_t handle, uint8_t* input, uint32_t size);
// Finishes an incremental document; its last bytes are the result.
__attribute__((export_name("hs_writer_finish"))) int32_t hs_writer_finish(uint32_t handle);
// The stats rows of the columns into the result, as f64 rows of the stats row's width (times in ns); takes the input over.
__attribute__((export_name("hs_stats"))) int32_t hs_stats(uint8_t* input, uint32_t size);
// Takes the input over; returns a query handle (0: malformed columns).
__attribute__((export_name("hs_query_open"))) QueryColumns* hs_query_open(uint8_t* input, uint32_t size);
// One step of native/core/read/query_call.h into the result as f64; name_size 0xFFFFFFFF: no name.
__attribute__((export_name("hs_query"))) int32_t hs_query(const QueryColumns* q, const double* args, const char* name, uint32_t name_size);
// The W3C ids of the columns' records; takes both buffers over (contexts: 6 u64 each, 0 when count is 0).
__attribute__((export_name("hs_span_ids"))) int32_t hs_span_ids(uint8_t* input, uint32_t size, uint64_t* contexts, uint32_t count, uint64_t salt);
// The ids of an open stack's innermost span; takes the frames (7 u64 each) over.
__attribute__((export_name("hs_open_ids"))) int32_t hs_open_ids(uint64_t* frames, uint32_t depth, uint32_t timeline, uint64_t salt);
// [wire id, trace hi, trace lo] of a span id as a root.
__attribute__((export_name("hs_root_ids"))) int32_t hs_root_ids(uint64_t span, uint64_t salt);
// An OTLP encoder: takes the resource buffer over; returns a handle (0: malformed).
__attribute__((export_name("hs_otlp_open"))) uint32_t hs_otlp_open(uint8_t* resource, uint32_t size, uint32_t encoding, int64_t unix_offset_ns, uint64_t salt);
// One OTLP read: takes the columns and the contexts over; result: u32 spans, u32 held, the request.
__attribute__((export_name("hs_otlp_next"))) int32_t hs_otlp_next(uint32_t handle, uint8_t* input, uint32_t size, uint8_t* contexts, uint32_t contexts_size, uint32_t count, uint32_t max_spans, uint32_t final, uint32_t unread);
}  // extern "C"
// </generated>
