// Perfetto protobuf trace (.pftrace) from a snapshot, hand-encoded (no
// libprotobuf). The js backend runs it too, built to WebAssembly (native/wasm).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "block_sink.h"
#include "tracer.h"

namespace hotspan {

// Perfetto timestamps are unsigned: every TracePacket timestamp is the span's
// ns on the performance.now() axis (ns - origin_ns) plus this offset (1 s),
// so the small negatives a clock calibration can give stay exact. Anything
// still below 0 after the offset is clamped to 0.
constexpr int64_t kPerfettoTimestampOffsetNs = 1000000000;

// Track uuids: a timeline's own track is its id; lane k >= 1 of a concurrent
// track (overlapping spans, see perfetto_writer.cc) is (k << 32) | id; the
// process track is kPerfettoProcessUuid. Timeline ids start at 1.
constexpr uint64_t kPerfettoProcessUuid = 0xFFFFFFFF00000000ull;
inline uint64_t perfetto_track_uuid(uint32_t timeline, uint32_t lane) {
  return (static_cast<uint64_t>(lane) << 32) | timeline;
}

// The trusted_packet_sequence_id of every packet (one sequence: the
// interned event names are scoped to it).
constexpr uint32_t kPerfettoSequenceId = 1;

// Appends a whole Trace (repeated TracePacket, field 1) to `out`.
void write_perfetto(const Snapshot& snapshot, int64_t origin_ns, std::string& out);
// The same bytes, streamed to `sink` in blocks.
void write_perfetto(const Snapshot& snapshot, int64_t origin_ns, BlockSink& sink);
// The same from records read in place (Tracer::freeze).
void write_perfetto(const FrozenSnapshot& snapshot, int64_t origin_ns, std::string& out);
void write_perfetto(const FrozenSnapshot& snapshot, int64_t origin_ns, BlockSink& sink);

namespace perfetto_detail {
// Base-128 varint (little-endian groups of 7 bits); at most 10 bytes.
inline size_t varint_size(uint64_t v) {
  // ceil(significant bits / 7), at least 1, without a loop.
  const auto bits = static_cast<size_t>(64 - __builtin_clzll(v | 1));
  return (bits * 9 + 64) / 64;
}
inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}
}  // namespace perfetto_detail

}  // namespace hotspan
