#include "otlp_source.h"

#include <algorithm>

#include "json_text.h"
#include "local_index.h"

namespace hotspan {
namespace {

// splitmix64's finalizer: a bijection, so distinct inputs give distinct ids.
uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

void put_be64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

}  // namespace

OtlpSource::OtlpSource(std::shared_ptr<const Tracer> tracer, const OtlpResource& resource, OtlpEncoding encoding,
                       uint64_t salt, int64_t unix_offset_ns)
    : tracer_(std::move(tracer)), writer_(resource, encoding, unix_offset_ns), salt_(salt) {}

uint64_t OtlpSource::span_id(uint64_t tracer_span_id) const {
  const uint64_t id = mix64(tracer_span_id ^ salt_);
  return id != 0 ? id : 1;  // 0 is "no id" (one input in 2^64)
}

OtlpSource::Batch OtlpSource::next(size_t max_spans, bool final, std::string& out) {
  Batch batch;
  const FrozenSnapshot snap = tracer_->freeze();
  for (size_t i = names_.size(); i < snap.names.size(); ++i) names_.push_back(json_text::sanitized(snap.names[i]));
  uint64_t waiting = 0;
  for (const FrozenTimeline& tl : snap.timelines) {
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
    if (first >= n) continue;
    // Stack timelines: up to (and including) the last committed root.
    const bool stack = tl.kind != TimelineKind::kTrack;
    uint32_t limit = n;
    if (stack && !final) {
      limit = first;
      for (uint32_t i = n; i > first; --i) {
        if (tl.records[i - 1].depth == 0) {
          limit = i;
          break;
        }
      }
    }
    const size_t room = max_spans - batch.spans;
    const uint32_t end = static_cast<uint32_t>(std::min<size_t>(limit, first + room));
    waiting += n - end;
    if (end == first) continue;
    const LocalIndex<std::string> attrs(tl.attrs, n);
    const LocalIndex<uint64_t> foreign(tl.foreign_parents, n);
    // The root of records [first, end): the first depth-0 record at or after end - 1.
    uint32_t root_local = 0;
    if (stack) {
      for (uint32_t i = end - 1; i < n; ++i) {
        if (tl.records[i].depth == 0) {
          root_local = tl.records[i].local_id;
          break;
        }
      }
    }
    // Walk backwards so a root is seen before its tree's earlier records;
    // spans are added in end order by filling a window of records.
    std::vector<uint64_t> roots(end - first);
    for (uint32_t i = end; i > first; --i) {
      const SpanRecord r = tl.records[i - 1];
      if (stack && r.depth == 0) root_local = r.local_id;
      roots[i - 1 - first] = make_span_id(tl.id, stack ? root_local : r.local_id);
    }
    for (uint32_t i = first; i < end; ++i) {
      const SpanRecord r = tl.records[i];
      OtlpSpan s;
      s.record = &r;
      static const std::string kUnknownName;
      s.name = r.name < names_.size() ? &names_[r.name] : &kUnknownName;
      s.attrs = (r.flags & kFlagAttrs) != 0 ? attrs.find(r.local_id) : nullptr;
      s.ids.span_id = span_id(make_span_id(tl.id, r.local_id));
      uint64_t tree = roots[i - first];
      if (r.parent_local != 0) {
        uint64_t parent = make_span_id(tl.id, r.parent_local);
        if ((r.flags & kFlagParentElsewhere) != 0) {
          const uint64_t* p = foreign.find(r.local_id);
          parent = p != nullptr ? *p : 0;
        }
        if (parent != 0) {
          s.ids.parent_span_id = span_id(parent);
          if (!stack) tree = parent;
        }
      }
      put_be64(s.ids.trace_id, mix64(tree ^ salt_));
      put_be64(s.ids.trace_id + 8, mix64(tree ^ ~salt_));
      writer_.add(s);
    }
    pos.next_stored += end - first;
    batch.spans += end - first;
    if (batch.spans == max_spans) {
      // Timelines not visited wait too; counted at the next call.
      break;
    }
  }
  waiting_ = waiting;
  taken_ += batch.spans;
  lost_ += batch.lost;
  if (batch.spans != 0) writer_.finish(out);
  return batch;
}

}  // namespace hotspan
