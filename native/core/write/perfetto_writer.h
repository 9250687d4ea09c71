// Perfetto protobuf trace (.pftrace) from a snapshot, hand-encoded (no
// libprotobuf). The js backend runs it too, built to WebAssembly (native/wasm).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "write/block_sink.h"
#include "record/clock_readings.h"
#include "write/document_info.h"
#include "write/document_writer.h"
#include "record/tracer.h"

namespace hotspan {

// Clock domain: every span timestamp is on kPerfettoClockId, a clock scoped
// to the trace's one packet sequence that reads CLOCK_MONOTONIC minus
// (origin_ns - kPerfettoTimestampOffsetNs), i.e. the span's ns on the
// performance.now() axis plus 1 s. The first packet declares it as the
// sequence's default timestamp clock (trace_packet_defaults) and relates it
// by a ClockSnapshot to MONOTONIC, BOOTTIME and REALTIME read together, so
// trace processors place the spans on those clocks (and merge the trace with
// others); the offset keeps the small negatives of a clock calibration
// exact and the timestamps short (their varints are most of a span's bytes).
// Anything still below 0 is clamped to 0.
constexpr int64_t kPerfettoTimestampOffsetNs = 1000000000;
constexpr uint32_t kPerfettoClockId = 64;  // the first sequence-scoped clock id

// BuiltinClock ids (perfetto_trace.proto).
constexpr uint32_t kPerfettoRealtime = 1, kPerfettoMonotonic = 3, kPerfettoBoottime = 6;

// Track uuids: a timeline's own track is its id; lane k >= 1 of a concurrent
// track (overlapping spans, see perfetto_writer.cc) is (k << 32) | id; the
// process track is kPerfettoProcessUuid. Timeline ids start at 1.
constexpr uint64_t kPerfettoProcessUuid = 0xFFFFFFFF00000000ull;
inline uint64_t perfetto_track_uuid(uint32_t timeline, uint32_t lane) {
  return (static_cast<uint64_t>(lane) << 32) | timeline;
}
// The recording's counts (document_info.h), written by finish(): a track
// descriptor under the process named "hotspan.counts" whose description is
// a JSON object of the counts, e.g. {"produced":3,"kept":3,...}.
constexpr uint64_t kPerfettoCountsUuid = 0xFFFFFFFD00000000ull;
// Counter series k (snapshot order) is a counter track under the process.
constexpr uint64_t kPerfettoCounterUuidBase = 0xFFFFFFFE00000000ull;
inline uint64_t perfetto_counter_uuid(size_t series) { return kPerfettoCounterUuidBase + series + 1; }

// The documents of several processes (DocumentInfo::pid) concatenate into
// one valid trace: each writes all its packets on one sequence,
// trusted_packet_sequence_id = its pid (the interned names and the clock
// kPerfettoClockId are scoped to it), names its process descriptor with its
// pid, and xors every track uuid above with perfetto_uuid_salt(pid): the
// high 32 bits only (a uuid's low 32 bits stay its timeline id), 0 for pid 1
// (a WebAssembly writer's).
inline uint32_t perfetto_sequence_id(uint32_t pid) { return pid == 0 ? 1 : pid; }
// The sequence of a document of pid 1.
constexpr uint32_t kPerfettoSequenceId = 1;
inline uint64_t perfetto_uuid_salt(uint32_t pid) {
  if (pid <= 1) return 0;
  uint64_t z = pid + 0x9E3779B97F4A7C15ull;  // splitmix64
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  const uint64_t high = (z ^ (z >> 31)) & 0xFFFFFFFF00000000ull;
  return high != 0 ? high : 1ull << 32;
}

// An incremental writer of one Trace (repeated TracePacket, field 1): given
// the document's inputs once, then fed batches of spans, then finished. Every
// packet is whole and length-framed as it is written, and a file holds all it
// needs from its own start (the clock, interned names, track descriptors),
// so a file cut at any packet boundary decodes up to there.
//
// A batch is a Snapshot (or FrozenSnapshot) of what is new: `names` is the
// whole name table so far (ids stable, only growing: names past the ones
// already interned are interned before the batch's spans), `timelines` the
// timelines with new records (described on first sight; their records in
// end order, as timelines keep them; attributes and foreign parents keyed by
// local id). Thread and group timelines write a span once its tree's root
// has come (a root ends after its descendants), so a batch need not end on a
// tree's boundary; tracks write each batch's spans whole, on lanes that stay
// busy across batches. A batch's counter series (`counters`) follow its
// spans. finish() also writes the document's counts (document_info.h).
//
// The document equals the whole-snapshot writer's (write_perfetto below)
// when the batches are the snapshot's timelines in order, each cut anywhere
// except inside a track, with every timeline and name in the first batch.
//
// After finish(), restart() begins a new, self-contained file with the same
// document inputs (a rotating stream): names and descriptors are written
// again on first sight.
class PerfettoWriter final : public DocumentWriter {
 public:
  // Appends to `out` (the caller may take and clear it between calls).
  PerfettoWriter(const DocumentInfo& doc, std::string& out);
  // Hands the output to `sink` in blocks, at packet boundaries and at the
  // end of every call.
  PerfettoWriter(const DocumentInfo& doc, BlockSink& sink);
  ~PerfettoWriter() override;
  PerfettoWriter(const PerfettoWriter&) = delete;
  PerfettoWriter& operator=(const PerfettoWriter&) = delete;

  using DocumentWriter::append;
  void append(const Snapshot& batch, bool last) override;
  void append(const FrozenSnapshot& batch, bool last) override;
  void set_counts(DocumentCounts counts) override;
  // Each process is written as its own document would be (its packet
  // sequence, process descriptor and uuids): a document of several is the
  // concatenation of theirs when each one's batches come together.
  void set_process(uint32_t pid, std::string name) override;
  // Also writes the spans still waiting (their root never came).
  void finish() override;
  void restart() override;

 private:
  class Impl;
  // The current process's writer, made on its first batch (or the finish of
  // a document without one).
  Impl& current();

  DocumentInfo doc_;  // the current process's (pid, process_name)
  std::string* out_;
  BlockSink* sink_;
  // A writer per process, in the order they were first written; pids_[k] is impls_[k]'s.
  std::vector<std::unique_ptr<Impl>> impls_;
  std::vector<uint32_t> pids_;
  Impl* current_ = nullptr;
};

// Appends a whole Trace (repeated TracePacket, field 1) to `out`. `clocks`
// are readings taken together at about the time of the write (see above).
void write_perfetto(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks, std::string& out);
// The same bytes, streamed to `sink` in blocks.
void write_perfetto(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks, BlockSink& sink);
// The same from records read in place (Tracer::freeze).
void write_perfetto(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                    std::string& out);
void write_perfetto(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                    BlockSink& sink);
// With the document's inputs (its counts too).
void write_perfetto(const Snapshot& snapshot, const DocumentInfo& doc, std::string& out);
void write_perfetto(const FrozenSnapshot& snapshot, const DocumentInfo& doc, std::string& out);
void write_perfetto(const FrozenSnapshot& snapshot, const DocumentInfo& doc, BlockSink& sink);
void write_perfetto(const Snapshot& snapshot, const DocumentInfo& doc, BlockSink& sink);


}  // namespace hotspan
