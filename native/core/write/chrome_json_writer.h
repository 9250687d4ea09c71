// Chrome Trace Event JSON (the object form) from a snapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "write/block_sink.h"
#include "record/clock_readings.h"
#include "write/document_info.h"
#include "write/document_writer.h"
#include "record/tracer.h"

namespace hotspan {

// An incremental writer of one document: given the document's inputs once,
// then fed batches, then finished. A batch is a Snapshot (or FrozenSnapshot)
// of what is new: `names` the whole name table so far (ids stable, only
// growing), `timelines` those with new records (their metadata events are
// written on first sight), each record written as its event(s) at once. The
// closing (clock metadata and the document's counts, "metadata":{"hotspan":
// {...}}, see document_info.h) is written by finish(). The document equals
// the whole-snapshot writer's (below) when the batches are the snapshot's
// timelines in order, cut anywhere, with every
// timeline in the first batch. After finish(), restart() begins a new
// document with the same inputs. A batch's counter series (`counters`) are
// written as counter events after its spans.
class ChromeJsonWriter final : public DocumentWriter {
 public:
  // Appends to `out` (the caller may take and clear it between calls).
  ChromeJsonWriter(const DocumentInfo& doc, std::string& out);
  // Hands the output to `sink` in blocks, at event boundaries and at the end
  // of every batch but the last.
  ChromeJsonWriter(const DocumentInfo& doc, BlockSink& sink);
  ~ChromeJsonWriter() override;
  ChromeJsonWriter(const ChromeJsonWriter&) = delete;
  ChromeJsonWriter& operator=(const ChromeJsonWriter&) = delete;

  using DocumentWriter::append;
  void append(const Snapshot& batch, bool last) override;
  void append(const FrozenSnapshot& batch, bool last) override;
  void set_counts(DocumentCounts counts) override;
  void set_process(uint32_t pid, std::string name) override;
  void finish() override;
  void restart() override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Appends the whole document to `out`. Times are converted to microseconds on
// the performance.now() axis with origin_ns. `clocks` (readings taken
// together) give the metadata that ties that axis to CLOCK_MONOTONIC and the
// Unix epoch.
void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       std::string& out);
// The same bytes, streamed to `sink` in blocks.
void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       BlockSink& sink);
// The same from records read in place (Tracer::freeze).
void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       std::string& out);
void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       BlockSink& sink);
// With the document's inputs (its counts too).
void write_chrome_json(const Snapshot& snapshot, const DocumentInfo& doc, std::string& out);
void write_chrome_json(const FrozenSnapshot& snapshot, const DocumentInfo& doc, std::string& out);
void write_chrome_json(const FrozenSnapshot& snapshot, const DocumentInfo& doc, BlockSink& sink);
void write_chrome_json(const Snapshot& snapshot, const DocumentInfo& doc, BlockSink& sink);

// A tracer's whole trace now (frozen, on its clock), with the counts of the
// records it covers (document_of): not the (snapshot, origin, clocks)
// overload, whose document carries no counts.
inline void write_chrome_json(const Tracer& tracer, std::string& out) {
  const FrozenSnapshot snap = tracer.freeze();
  write_chrome_json(snap, document_of(snap, tracer.origin_ns(), read_clocks()).of_process(current_pid(), tracer.process_name()), out);
}

}  // namespace hotspan
