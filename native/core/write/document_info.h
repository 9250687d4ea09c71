// What a written document says about itself, given once per document (file)
// to the incremental writers (PerfettoWriter, ChromeJsonWriter) before any
// batch of spans: which clock its times are on, and what became of the
// recording (its counts).
#pragma once

#include <cstdint>
#include <string>
#if !defined(__wasm__)
#include <unistd.h>
#endif
#include <utility>
#include <vector>

#include "record/clock_readings.h"
#include "record/record_counts.h"

namespace hotspan {

// Named counts a document carries, written when it is finished: in Chrome
// JSON as "metadata":{"hotspan":{name:value,...}}, in Perfetto as a track
// descriptor "hotspan.counts" whose description is the same JSON object
// (perfetto_writer.h). Empty: nothing is written.
struct DocumentCounts {
  std::vector<std::pair<std::string, uint64_t>> values;

  bool empty() const { return values.empty(); }
};

// A tracer's counts (record_counts.h) under their documented names.
inline DocumentCounts document_counts(const RecordCounts& c) {
  return DocumentCounts{{{"produced", c.produced},
                         {"kept", c.kept},
                         {"released", c.released},
                         {"overwritten", c.overwritten},
                         {"dropped", c.dropped}}};
}

// The totals over a snapshot's timelines (each carries its counts).
template <typename SnapshotT>
RecordCounts total_counts(const SnapshotT& snapshot) {
  RecordCounts sum;
  for (const auto& tl : snapshot.timelines) sum += tl.counts;
  return sum;
}

// The process this one is: its pid (getpid()); 1 in WebAssembly, which
// has no process id.
inline uint32_t current_pid() {
#if defined(__wasm__)
  return 1;
#else
  return static_cast<uint32_t>(getpid());
#endif
}

struct DocumentInfo {
  // The performance.now() origin on CLOCK_MONOTONIC: records' times are
  // MONOTONIC ns, written relative to it (see the writers' headers).
  int64_t origin_ns = 0;
  // Readings taken together, tying MONOTONIC to the other clocks.
  ClockReadings clocks;
  // The recording's counts (writers' set_counts() replaces them before
  // finish(), e.g. a stream's at its end).
  DocumentCounts counts;
  // The process the spans were recorded in: Chrome JSON's pid, Perfetto's
  // process descriptor, packet sequence and track uuids (perfetto_writer.h),
  // so the documents of several processes joined into one trace stay apart.
  // 1 unless the writer's caller says: a tracer's own writes say their
  // process's (with_pid below: the addon, TraceStream); the js backend's
  // (WebAssembly) say 1.
  uint32_t pid = 1;
  // The process's name: Chrome JSON's process_name metadata, Perfetto's
  // process descriptor's process_name. "hotspan" unless the caller says: a
  // tracer's writes say its TracerOptions::process_name (of_process below).
  std::string process_name = "hotspan";

  // This document as the process `pid` wrote it.
  DocumentInfo with_pid(uint32_t p) const {
    DocumentInfo d = *this;
    d.pid = p;
    return d;
  }
  // This document as the process `pid`, named `name`, wrote it.
  DocumentInfo of_process(uint32_t p, std::string name) const {
    DocumentInfo d = with_pid(p);
    d.process_name = std::move(name);
    return d;
  }
};

// A document of a tracer's snapshot: its counts are the snapshot's.
template <typename SnapshotT>
DocumentInfo document_of(const SnapshotT& snapshot, int64_t origin_ns, const ClockReadings& clocks) {
  return DocumentInfo{origin_ns, clocks, document_counts(total_counts(snapshot))};
}

}  // namespace hotspan
