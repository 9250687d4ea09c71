#include "export/export_cursor.h"

#include <utility>
#include <vector>

namespace hotspan {

std::unique_ptr<ExportCursor> ExportCursor::open(std::shared_ptr<const Tracer> tracer) {
  auto cursor = RecordCursor::open(tracer);
  if (cursor == nullptr) return nullptr;
  return std::unique_ptr<ExportCursor>(new ExportCursor(std::move(tracer), std::move(cursor)));
}

uint64_t ExportCursor::count_lost(uint64_t& lost) {
  const std::vector<TimelineCounts> counts = tracer_->counts();
  // Lost before read: recycled before the cursor opened, or since it read
  // last, and dropped by the budget.
  if (!skipped_seen_) {
    lost += cursor_->skipped();
    skipped_seen_ = true;
  }
  lost += cursor_->missed() - missed_seen_;
  missed_seen_ = cursor_->missed();
  uint64_t committed = 0;
  for (const TimelineCounts& tc : counts) {
    uint64_t& seen = dropped_seen_[tc.id];
    lost += tc.counts.dropped - seen;
    seen = tc.counts.dropped;
    committed += tc.counts.produced - tc.counts.dropped;
  }
  return committed - cursor_->skipped() - cursor_->delivered() - cursor_->missed() - cursor_->passed();
}

}  // namespace hotspan
