// Chunk memory whose pages are already faulted in. The first write to fresh
// anonymous memory costs a page fault per 4 KiB page, paid by the recording
// thread once per 146 records (bench/cases/native.mjs bare-fresh measures a
// fault's share of a record; micro.mjs hotspan-id-noreserve runs without the
// reserve). One background thread keeps a few chunks
// touched ahead of need; a writer takes one under a short lock (once per
// chunk) and falls back to a plain allocation when the reserve is empty.
//
// The fault is moved, not removed: the process spends the same CPU, on the
// reserve's thread instead of the traced one, so spans stop absorbing the
// tracer's own page faults. That thread runs at idle priority: on a busy
// machine it yields and writers fault their chunks in themselves.
// HOTSPAN_CHUNK_RESERVE=0 turns the reserve off (every chunk is then
// faulted by its writer).
#pragma once

#include <cstddef>

namespace hotspan::chunk_reserve {

constexpr size_t kChunkBytes = 28 * 1024;  // 7 pages
constexpr size_t kHighWater = 8;  // chunks kept ready (224 KiB)
constexpr size_t kLowWater = 4;   // taking below this wakes the filler

// kChunkBytes from ::operator new, pages touched when the reserve had one.
// Free with ::operator delete. Starts the filler on first use. Any thread.
void* take();

// Tests and benchmarks: chunks ready now; whether the reserve is on.
size_t ready();
bool enabled();

}  // namespace hotspan::chunk_reserve
