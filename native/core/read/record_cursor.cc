#include "read/record_cursor.h"

#include <algorithm>
#include <utility>

#include "record/chunk_pool.h"
#include "record/timeline.h"

namespace hotspan {

std::unique_ptr<RecordCursor> RecordCursor::open(std::shared_ptr<const Tracer> tracer) {
  const int slot = tracer->pool().add_consumer();
  if (slot < 0) return nullptr;
  std::unique_ptr<RecordCursor> cur(new RecordCursor(std::move(tracer), slot));
  // After the slot is taken: from here on a recycler counts what this cursor
  // has not read as lost to it. A timeline made after this list starts at 0.
  const auto timelines = cur->tracer_->timelines();
  cur->next_.assign(timelines.size(), 0);
  for (size_t i = 0; i < timelines.size(); ++i) {
    const uint64_t kept = timelines[i]->start_consumer(slot);
    cur->next_[i] = kept;
    cur->skipped_ += kept;
  }
  return cur;
}

RecordCursor::RecordCursor(std::shared_ptr<const Tracer> tracer, int slot)
    : tracer_(std::move(tracer)), slot_(slot) {}

RecordCursor::~RecordCursor() { tracer_->pool().remove_consumer(slot_); }

uint64_t RecordCursor::pass() {
  const auto timelines = tracer_->timelines();
  if (next_.size() < timelines.size()) next_.resize(timelines.size(), 0);
  uint64_t passed = 0;
  for (size_t i = 0; i < timelines.size(); ++i) {
    uint64_t first = 0;
    const uint64_t end = timelines[i]->pass(next_[i], slot_, &first);
    missed_ += first - next_[i];
    passed += end - first;
    next_[i] = end;
  }
  read_through_ns_ = INT64_MAX;  // nothing is left unread to come before a later record
  passed_ += passed;
  return passed;
}

bool RecordCursor::next(FrozenSnapshot& batch, uint64_t max_records) {
  // Drop the previous batch's pins first: its chunks may be released now.
  batch.timelines.clear();
  batch.counters.clear();
  first_read_.clear();
  const auto timelines = tracer_->timelines();
  if (next_.size() < timelines.size()) next_.resize(timelines.size(), 0);
  if (last_end_.size() < timelines.size()) last_end_.resize(timelines.size(), INT64_MIN);
  uint64_t room = max_records;

  // Starting after the timeline that filled the last batch: a limited batch
  // does not starve the timelines after the first.
  for (size_t k = 0; k < timelines.size() && room != 0; ++k) {
    const size_t i = (start_ + k) % timelines.size();
    uint64_t& next = next_[i];
    FrozenTimeline tl;
    uint64_t first_read = 0;
    const uint64_t first = timelines[i]->freeze(timelines[i], tl, next, slot_, room, &first_read);
    missed_ += first - next;
    next = first + tl.records.size();
    if (tl.records.empty()) continue;
    last_end_[i] = tl.records[tl.records.size() - 1].end_ns;
    room -= tl.records.size();
    // This one may have more: the next batch starts after it, so every other
    // timeline is read before it again (one busy thread does not hold back
    // the rest, a request's track behind its thread's spans).
    if (room == 0) start_ = (i + 1) % timelines.size();
    delivered_ += tl.records.size();
    first_read_.push_back(static_cast<uint32_t>(first_read - first));
    batch.timelines.push_back(std::move(tl));
  }
  // The watermark, after every read above: the least end read through over
  // the timelines with records left (cut by `room`, not reached, or
  // committed since); the others are read through entirely. A record that
  // ended before one read here is committed by now unless its thread was
  // stopped between its end and its commit.
  int64_t through = INT64_MAX;
  for (size_t i = 0; i < timelines.size(); ++i) {
    if (next_[i] < timelines[i]->committed()) through = std::min(through, last_end_[i]);
  }
  read_through_ns_ = through;
  if (batch.timelines.empty()) return false;
  // Names last: every name id in the records was interned before them.
  batch.names = tracer_->names();
  return true;
}

}  // namespace hotspan
