#include "export/otlp_source.h"

#include <algorithm>

namespace hotspan {

std::unique_ptr<OtlpSource> OtlpSource::open(std::shared_ptr<const Tracer> tracer, const OtlpResource& resource,
                                             OtlpEncoding encoding, int64_t unix_offset_ns) {
  auto cursor = ExportCursor::open(std::move(tracer));
  if (cursor == nullptr) return nullptr;
  return std::unique_ptr<OtlpSource>(new OtlpSource(std::move(cursor), resource, encoding, unix_offset_ns));
}

OtlpSource::OtlpSource(std::unique_ptr<ExportCursor> cursor, const OtlpResource& resource, OtlpEncoding encoding,
                       int64_t unix_offset_ns)
    : cursor_(std::move(cursor)),
      batcher_(resource, encoding, unix_offset_ns, cursor_->tracer().id_salt(), cursor_->tracer().sampler(),
               cursor_->tracer().keep()) {
  for (const std::string& name : cursor_->tracer().keep_names()) batcher_.keep_name(name);
}

OtlpSource::Batch OtlpSource::discard() {
  Batch batch;
  batch.spans += cursor_->records().pass();  // the chunks passed go back to the pool
  // The held-back records: a final request nobody sends.
  std::string scratch;
  while (batcher_.held() != 0) {
    Snapshot none;
    scratch.clear();
    const OtlpBatcher::Result r = batcher_.encode(none, false, kMaxHeld, true, scratch);
    if (r.spans == 0 && r.sampled_out == 0) break;
    batch.spans += r.spans;
    batch.sampled_out += r.sampled_out;
    batch.keep_timed_out += r.keep_timed_out;
    cursor_->tracer().count_sampled_out(r.sampled_out_first);
  }
  waiting_ = cursor_->count_lost(batch.lost);
  unread_ = waiting_;
  taken_ += batch.spans;
  lost_ += batch.lost;
  sampled_out_ += batch.sampled_out;
  keep_timed_out_ += batch.keep_timed_out;
  return batch;
}

OtlpSource::Batch OtlpSource::next(size_t max_spans, bool final, std::string& out) {
  Batch batch;
  // The new records (pinned until this call returns), then the counts: they
  // cover at least what was read.
  FrozenSnapshot snap;
  const size_t held = batcher_.held();
  // Room for new records beside the held ones (some of those go now), and
  // always some: held records alone may all still wait.
  cursor_->records().next(snap, max_spans - std::min(held, max_spans / 2));
  for (size_t i = batcher_.names(); i < snap.names.size(); ++i) batcher_.add_name(snap.names[i]);
  const uint64_t unread = cursor_->count_lost(batch.lost);

  // The batch: per timeline, the records held back, then the new ones.
  Snapshot in;
  const std::vector<uint32_t>& first_read = cursor_->records().first_read();
  for (size_t k = 0; k < snap.timelines.size(); ++k) {
    FrozenTimeline& tl = snap.timelines[k];
    SnapshotTimeline& bt = batcher_.timeline(in, tl.id, tl.kind);
    const auto held_here = static_cast<uint32_t>(bt.records.size());
    batcher_.read_first_elsewhere(in.timelines.size() - 1, held_here, held_here + first_read[k]);
    bt.records.reserve(bt.records.size() + tl.records.size());
    for (uint32_t i = 0; i < tl.records.size(); ++i) bt.records.push_back(tl.records[i]);
    for (auto& a : tl.attrs) bt.attrs.push_back(std::move(a));
    for (const auto& f : tl.foreign_parents) bt.foreign_parents.push_back(f);
    for (auto& c : tl.contexts) bt.contexts.push_back(std::move(c));
  }
  snap.timelines.clear();  // the chunks read go back to the pool
  const OtlpBatcher::Result r = batcher_.encode(in, unread != 0, max_spans, final, out,
                                                   cursor_->records().read_through_ns());
  batch.spans = r.spans;
  batch.sampled_out = r.sampled_out;
  batch.keep_timed_out = r.keep_timed_out;
  cursor_->tracer().count_sampled_out(r.sampled_out_first);
  waiting_ = r.waiting + unread;
  unread_ = unread;
  taken_ += batch.spans;
  lost_ += batch.lost;
  sampled_out_ += batch.sampled_out;
  keep_timed_out_ += batch.keep_timed_out;
  return batch;
}

}  // namespace hotspan
