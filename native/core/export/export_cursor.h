// An export's read of a tracer: its RecordCursor (record_cursor.h) and the
// count of the records lost before the cursor took them (recycled before it
// opened or since it read last, dropped by the budget). OtlpSource reads
// through one in the exporter's thread; the WebAssembly recording core
// (native/wasm/record_exports.cc hs_rec_export_*) hands what one takes to
// the js backend's exporter worker, whose OtlpBatcher encodes it: one
// accounting for both, taken + sampled_out + lost + waiting = produced.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>

#include "read/record_cursor.h"
#include "record/tracer.h"

namespace hotspan {

class ExportCursor {
 public:
  // nullptr when every consumer slot of the tracer is taken.
  static std::unique_ptr<ExportCursor> open(std::shared_ptr<const Tracer> tracer);

  RecordCursor& records() { return *cursor_; }
  const Tracer& tracer() const { return *tracer_; }

  // Adds the records lost since the last call to `lost`; returns the records
  // committed and not read by the cursor yet.
  uint64_t count_lost(uint64_t& lost);

 private:
  ExportCursor(std::shared_ptr<const Tracer> tracer, std::unique_ptr<RecordCursor> cursor)
      : tracer_(std::move(tracer)), cursor_(std::move(cursor)) {}

  std::shared_ptr<const Tracer> tracer_;
  std::unique_ptr<RecordCursor> cursor_;
  std::unordered_map<uint32_t, uint64_t> dropped_seen_;  // by timeline id
  uint64_t missed_seen_ = 0;
  bool skipped_seen_ = false;
};

}  // namespace hotspan
