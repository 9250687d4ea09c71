#include "otlp_source.h"

#include <algorithm>

#include "json_text.h"
#include "local_index.h"

namespace hotspan {
namespace {

void put_be64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

// The last depth-0 record in [first, end), + 1; `first` when there is none.
template <typename Records>
uint32_t past_last_root(const Records& recs, uint32_t first, uint32_t end) {
  for (uint32_t i = end; i > first; --i) {
    if (recs[i - 1].depth == 0) return i;
  }
  return first;
}

}  // namespace

OtlpSource::OtlpSource(std::shared_ptr<const Tracer> tracer, const OtlpResource& resource, OtlpEncoding encoding,
                       int64_t unix_offset_ns)
    : tracer_(std::move(tracer)), writer_(resource, encoding, unix_offset_ns), salt_(tracer_->id_salt()) {}

void OtlpSource::remember(uint64_t span, const SpanIds& ids) {
  if (sent_order_.size() < kSentCacheSpans) {
    sent_order_.push_back(span);
  } else {
    sent_.erase(sent_order_[sent_next_]);
    sent_order_[sent_next_] = span;
    sent_next_ = (sent_next_ + 1) % kSentCacheSpans;
  }
  sent_[span] = SentTrace{ids.trace, ids.flags};
}

OtlpSource::Batch OtlpSource::next(size_t max_spans, bool final, std::string& out) {
  Batch batch;
  FrozenSnapshot snap = tracer_->freeze();
  for (size_t i = names_.size(); i < snap.names.size(); ++i) names_.push_back(json_text::sanitized(snap.names[i]));

  // The batch: per timeline, the records held back, then the new ones.
  Snapshot in;
  size_t room = max_spans;
  bool more = false;  // records left for a later read
  for (FrozenTimeline& tl : snap.timelines) {
    Position& pos = positions_[tl.id];
    const RecordCounts& c = tl.counts;
    // Lost before taken: overwritten past our position, and new drops.
    if (pos.next_stored < c.overwritten) {
      batch.lost += c.overwritten - pos.next_stored;
      pos.next_stored = c.overwritten;
    }
    batch.lost += c.dropped - pos.dropped_seen;
    pos.dropped_seen = c.dropped;
    const auto first = static_cast<uint32_t>(pos.next_stored - c.overwritten);
    const uint32_t n = tl.records.size();
    uint32_t end = first;
    if (first < n && room > 0) {
      const auto cap = static_cast<uint32_t>(std::min<size_t>(n, first + room));
      if (tl.kind == TimelineKind::kTrack) {
        end = cap;
      } else {
        // Whole trees when one fits, else up to the room (the tail is held
        // until its root comes); a final read also takes trees whose root
        // never came.
        end = past_last_root(tl.records, first, cap);
        if (end == first) end = std::min(cap, past_last_root(tl.records, first, n));
        if (end == first && final) end = cap;
      }
    }
    more |= end < n;
    auto held = held_.find(tl.id);
    if (end == first && held == held_.end()) continue;
    SnapshotTimeline& bt = in.timelines.emplace_back();
    bt.id = tl.id;
    bt.kind = tl.kind;
    if (held != held_.end()) {
      for (const Held& h : held->second) bt.records.push_back(h.record);
    }
    for (uint32_t i = first; i < end; ++i) bt.records.push_back(tl.records[i]);
    bt.attrs = std::move(tl.attrs);
    bt.foreign_parents = std::move(tl.foreign_parents);
    bt.contexts = std::move(tl.contexts);
    pos.next_stored += end - first;
    room -= std::min<size_t>(room, end - first);
  }
  // Held records of timelines the freeze no longer lists (none today: timelines are never removed).

  std::vector<std::vector<SpanIds>> ids;
  resolve_span_ids(in, salt_, ids);

  // Unresolved: the chain leaves the batch at some ancestor. Its trace, when
  // it was sent already, resolves the whole chain.
  std::unordered_map<uint64_t, std::pair<size_t, uint32_t>> where;
  for (size_t t = 0; t < in.timelines.size(); ++t) {
    const SnapshotTimeline& bt = in.timelines[t];
    for (uint32_t i = 0; i < bt.records.size(); ++i) {
      if (!ids[t][i].resolved) where[make_span_id(bt.id, bt.records[i].local_id)] = {t, i};
    }
  }
  std::vector<LocalIndex<uint64_t>> foreign;
  foreign.reserve(in.timelines.size());
  for (const SnapshotTimeline& bt : in.timelines) foreign.emplace_back(bt.foreign_parents, bt.records.size());
  const auto parent_of = [&](size_t t, const SpanRecord& r) -> uint64_t {
    if ((r.flags & kFlagParentElsewhere) != 0) {
      const uint64_t* p = foreign[t].find(r.local_id);
      return p != nullptr ? *p : 0;
    }
    return r.parent_local != 0 ? make_span_id(in.timelines[t].id, r.parent_local) : 0;
  };
  std::vector<std::pair<size_t, uint32_t>> chain;
  for (size_t t = 0; t < in.timelines.size(); ++t) {
    const SnapshotTimeline& bt = in.timelines[t];
    for (uint32_t i = 0; i < bt.records.size(); ++i) {
      if (ids[t][i].resolved) continue;
      // Walk up through unresolved records of the batch: the chain ends at a
      // parent outside the batch (a resolved parent in it would have resolved the chain).
      chain.clear();
      std::pair<size_t, uint32_t> at{t, i};
      uint64_t top = 0;
      for (;;) {
        chain.push_back(at);
        const SnapshotTimeline& ct = in.timelines[at.first];
        const uint64_t p = parent_of(at.first, ct.records[at.second]);
        auto w = p != 0 ? where.find(p) : where.end();
        if (w == where.end() || chain.size() > where.size()) {
          top = p;
          break;
        }
        at = w->second;
      }
      if (top == 0) continue;
      auto s = sent_.find(top);
      if (s == sent_.end()) continue;
      for (const auto& c : chain) {
        ids[c.first][c.second].trace = s->second.trace;
        ids[c.first][c.second].flags = s->second.flags;
        ids[c.first][c.second].resolved = true;
      }
    }
  }

  uint64_t waiting = 0;
  for (size_t t = 0; t < in.timelines.size(); ++t) {
    const SnapshotTimeline& bt = in.timelines[t];
    const LocalIndex<std::string> attrs(bt.attrs, bt.records.size());
    const auto held_it = held_.find(bt.id);
    std::vector<Held> old = held_it != held_.end() ? std::move(held_it->second) : std::vector<Held>{};
    if (held_it != held_.end()) held_.erase(held_it);
    std::vector<Held> still;
    for (uint32_t i = 0; i < bt.records.size(); ++i) {
      const SpanRecord& r = bt.records[i];
      SpanIds& id = ids[t][i];
      const uint32_t reads = i < old.size() ? old[i].reads + 1 : 1;
      if (!id.resolved) {
        if ((!final || more) && reads <= kMaxHoldReads) {
          still.push_back(Held{r, reads});
          continue;
        }
        // Its ancestor never came (lost, or open too long): a trace of its own.
        id.trace = trace_id::derived_trace_id(salt_, make_span_id(bt.id, r.local_id));
        id.flags = kTraceFlagSampled;
      }
      OtlpSpan s;
      s.record = &r;
      static const std::string kUnknownName;
      s.name = r.name < names_.size() ? &names_[r.name] : &kUnknownName;
      s.attrs = (r.flags & kFlagAttrs) != 0 ? attrs.find(r.local_id) : nullptr;
      put_be64(s.ids.trace_id, id.trace.hi);
      put_be64(s.ids.trace_id + 8, id.trace.lo);
      s.ids.span_id = id.span;
      s.ids.parent_span_id = id.parent;
      s.ids.trace_flags = id.flags;
      writer_.add(s);
      remember(make_span_id(bt.id, r.local_id), id);
      ++batch.spans;
    }
    waiting += still.size();
    if (!still.empty()) held_[bt.id] = std::move(still);
  }
  for (const FrozenTimeline& tl : snap.timelines) {
    const uint64_t stored = tl.counts.overwritten + tl.records.size();
    waiting += stored - std::min(positions_[tl.id].next_stored, stored);
  }
  waiting_ = waiting;
  taken_ += batch.spans;
  lost_ += batch.lost;
  if (batch.spans != 0) writer_.finish(out);
  return batch;
}

}  // namespace hotspan
