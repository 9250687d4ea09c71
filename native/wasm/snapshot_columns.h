// The js backend's recorded columns (lib/binding/wasm-core.ts encodes them), decoded
// into a core Snapshot so the core's own writers and stats read them.
//
// Input layout, little-endian, one buffer:
//   u32 header[8]: version (kColumnsVersion), record count n, name count N,
//                  timeline count T, attribute count A, counter series count
//                  C, counter sample count S, CPU profile count P (0 on
//                  output)
//   f64 times[2n]:  start ms, end ms per record (performance.now() axis)
//   f64 samples[2S]: ms, value per counter sample, series after series
//   u32 fields[6n]: name id, timeline id, local id, parent timeline id,
//                   parent local id, depth << 16 | flags (NativeSnapshot's)
//   u32 timelines[2T]: id, kind | serial << 8 | exited << 9
//   u32 attrs[A]:   record index of each attribute text
//   u32 series[2C]: sample count, dropped count of each counter series
//   u32 ends[N + T + A + C]: end offset of each string in the bytes below,
//                   in order: names, timeline names, attribute texts,
//                   counter names
//   u8  bytes[]:    UTF-8
//   then, on input, the P CPU profiles (record/cpu_profile.h), each:
//     u32 timeline id, frame count F, node count M, sample count K
//     i32 lines[2F]:  line, column of each frame (0-based, -1 unknown)
//     u32 node_frame[M], i32 node_parent[M] (-1: the root)
//     u32 sample_node[K], f64 sample_ms[K] (ms as the records' times)
//     u32 ends[2F]:   end offset of each frame's function, then url, in
//     u8  bytes[]:    the UTF-8 that follows
//   (unaligned: read byte-wise).
// Records may come in any timeline order; each timeline keeps their order.
// Times become ns as Math.round(ms * 1e6), with origin_ns 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "record/tracer.h"

namespace hotspan::wasm {

constexpr uint32_t kColumnsVersion = 1;
constexpr size_t kHeaderWords = 8;

// False when the buffer is shorter than its header says, names a timeline
// it does not describe, or holds a CPU profile that is not valid().
bool decode_columns(const uint8_t* data, size_t size, Snapshot& out);

// A time of the columns (ms on the performance.now() axis) as the ns decode_columns makes of it.
int64_t ms_to_ns(double ms);

// The other way: the core's frozen records in this layout (the wasm engine's
// snapshot, lib/binding/wasm-recorder.ts decodes it), times as ms from
// `origin_ns`; records grouped by timeline in id order, end order within
// one, as the addon's snapshot lists them. Parents on other timelines come
// from the snapshot's foreign parents. After the bytes, on output only, the
// stored contexts: u32 count, then per context u32 record index, u32 flags,
// u64 trace hi, u64 trace lo, u64 parent wire id, u32 tracestate size, and
// then the tracestates (UTF-8), unaligned.
void encode_columns(const FrozenSnapshot& snap, int64_t origin_ns, std::string& out);

}  // namespace hotspan::wasm
