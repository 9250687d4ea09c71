#include "read/trace_keep.h"

#include <algorithm>

#include "record/clock.h"
#include "record/json_text.h"
#include "record/local_index.h"
#include "record/sampler.h"
#include "record/tail_keep.h"

namespace hotspan {

TraceKeep::TraceKeep(uint64_t salt, uint64_t sampler, uint64_t keep) : salt_(salt), sampler_(sampler), keep_(keep) {
  // The caches fill to their bound within the first few reads: their
  // buckets once, not a rehash at each doubling.
  seen_.reserve(kCacheSpans);
  if (tail_keep::enabled(keep_)) decided_.reserve(kCacheSpans);
}

bool TraceKeep::samples(uint64_t sampler, uint64_t keep, const std::vector<std::string>& keep_names) {
  return sampler != 0 || tail_keep::enabled(keep) || !keep_names.empty();
}

const std::string& TraceKeep::name(uint32_t id) const {
  static const std::string kUnknownName;
  return id < names_.size() ? names_[id] : kUnknownName;
}

void TraceKeep::decide_tails(const Snapshot& in, const std::vector<std::vector<SpanIds>>& ids,
                               int64_t read_through_ns) {
  // Per head-unsampled trace not decided yet: its root's duration and end, any error.
  std::unordered_map<TraceId, Tail, TraceHash>& tails = tails_;
  tails.clear();
  for (size_t t = 0; t < in.timelines.size(); ++t) {
    const SnapshotTimeline& bt = in.timelines[t];
    for (uint32_t i = 0; i < bt.records.size(); ++i) {
      const SpanIds& id = ids[t][i];
      if (!id.resolved || (id.flags & kTraceFlagSampled) != 0) continue;
      const SpanRecord& r = bt.records[i];
      // The local root: no parent in this process (none at all, or a remote
      // one from a stored context such as extract()'s). A span begun in an
      // async continuation under a span of this process (kFlagParentElsewhere:
      // its parent's tracer-wide id) is not one, async or not: its trace
      // waits for its root.
      const bool root = r.parent_local == 0 && (r.flags & kFlagParentElsewhere) == 0;
      const bool error = (r.flags & kFlagError) != 0;
      const bool named = r.name < named_.size() && named_[r.name];
      // Only a root, an error or a kept name decides a trace: the other spans
      // wait for it (no lookup per span).
      if (!root && !error && !named) continue;
      if (decided_.count(id.trace) != 0) continue;
      Tail& tail = tails[id.trace];
      tail.error |= error;
      tail.named |= named;
      if (root) {
        tail.root_ns = std::max(tail.root_ns, r.end_ns - r.start_ns);
        tail.root_end_ns = std::max(tail.root_end_ns, r.end_ns);
      }
    }
  }
  for (const auto& [trace, tail] : tails) {
    // Neither a kept error nor its root with every span that ended before
    // it read (the watermark past the root's end): its spans wait (sort()).
    const bool keep = tail.named || tail_keep::keeps(keep_, tail.root_ns, tail.error);
    if (!keep && (tail.root_ns < 0 || tail.root_end_ns > read_through_ns)) continue;
    decide(trace, keep);
  }
}

void TraceKeep::decide(const TraceId& trace, bool keep) {
  if (decided_order_.size() < kCacheSpans) {
    decided_order_.push_back(trace);
  } else {
    // The oldest entry's node is reused for the new one: no allocation per trace once full.
    auto node = decided_.extract(decided_order_[decided_next_]);
    decided_order_[decided_next_] = trace;
    decided_next_ = (decided_next_ + 1) % kCacheSpans;
    if (!node.empty() && decided_.count(trace) == 0) {
      node.key() = trace;
      node.mapped() = keep;
      decided_.insert(std::move(node));
      return;
    }
  }
  decided_[trace] = keep;
}

size_t TraceKeep::held() const {
  size_t n = 0;
  for (const auto& h : held_) n += h.second.size();
  return n;
}

void TraceKeep::add_name(const std::string& name) {
  names_.push_back(json_text::sanitized(name));
  named_.push_back(std::find(keep_names_.begin(), keep_names_.end(), names_.back()) != keep_names_.end());
}

void TraceKeep::keep_name(const std::string& name) {
  keep_names_.push_back(json_text::sanitized(name));
  for (size_t i = 0; i < names_.size(); ++i) named_[i] = named_[i] || names_[i] == keep_names_.back();
  if (decided_.empty()) decided_.reserve(kCacheSpans);
}

bool TraceKeep::keeping() const { return tail_keep::enabled(keep_) || !keep_names_.empty(); }

void TraceKeep::remember(uint64_t span, const SpanIds& ids, std::shared_ptr<const std::string> tracestate) {
  if (seen_order_.size() < kCacheSpans) {
    seen_order_.push_back(span);
  } else {
    // The oldest entry's node is reused for the new one: no allocation per span once full.
    auto node = seen_.extract(seen_order_[seen_next_]);
    seen_order_[seen_next_] = span;
    seen_next_ = (seen_next_ + 1) % kCacheSpans;
    if (!node.empty() && seen_.count(span) == 0) {
      node.key() = span;
      node.mapped() = SeenTrace{ids.trace, ids.flags, std::move(tracestate)};
      seen_.insert(std::move(node));
      return;
    }
  }
  seen_[span] = SeenTrace{ids.trace, ids.flags, std::move(tracestate)};
}

void TraceKeep::add_held(Snapshot& in, size_t t, std::vector<Held>& held) {
  SnapshotTimeline& bt = in.timelines[t];
  for (Held& h : held) {
    if (!h.first) read_first_elsewhere(t, static_cast<uint32_t>(bt.records.size()), static_cast<uint32_t>(bt.records.size() + 1));
    bt.records.push_back(h.record);
    if ((h.record.flags & kFlagAttrs) != 0) bt.attrs.emplace_back(h.record.local_id, std::move(h.attrs));
    if ((h.record.flags & kFlagParentElsewhere) != 0) bt.foreign_parents.emplace_back(h.record.local_id, h.foreign);
    if (h.has_context) bt.contexts.emplace_back(h.record.local_id, std::move(h.context));
  }
}

SnapshotTimeline& TraceKeep::timeline(Snapshot& in, uint32_t id, TimelineKind kind) {
  SnapshotTimeline& bt = in.timelines.emplace_back();
  bt.id = id;
  bt.kind = kind;
  auto held = held_.find(id);
  if (held != held_.end()) add_held(in, in.timelines.size() - 1, held->second);
  return bt;
}

void TraceKeep::read_first_elsewhere(size_t t, uint32_t begin, uint32_t end) {
  if (begin >= end) return;
  if (elsewhere_.size() <= t) elsewhere_.resize(t + 1);
  std::vector<bool>& e = elsewhere_[t];
  if (e.size() < end) e.resize(end, false);
  for (uint32_t i = begin; i < end; ++i) e[i] = true;
}

TraceKeep::Result TraceKeep::sort(Snapshot& in, bool unread, size_t max_take, bool final, int64_t read_through_ns,
                                  const Take& take) {
  Result batch;
  // Held records of timelines with nothing new.
  const size_t listed = in.timelines.size();
  for (auto& [id, held] : held_) {
    bool seen = false;
    for (size_t t = 0; t < listed; ++t) seen |= in.timelines[t].id == id;
    if (seen) continue;
    SnapshotTimeline& bt = in.timelines.emplace_back();
    bt.id = id;
    add_held(in, in.timelines.size() - 1, held);
  }
  size_t in_batch = 0;
  for (const SnapshotTimeline& bt : in.timelines) in_batch += bt.records.size();
  // Left for a later read: unread records, or more than one request takes.
  const bool more = unread || in_batch > max_take;

  std::vector<std::vector<SpanIds>> ids;
  resolve_span_ids(in, salt_, ids, sampler_);
  const bool keeping = this->keeping();
  const int64_t now = keeping ? clock::now_ns() : 0;

  // Unresolved: the chain leaves the batch at some ancestor. Its trace, when
  // it was seen already, resolves the whole chain.
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
  // The tracestate of chains resolved from a sent ancestor, by position (t << 32 | i).
  std::unordered_map<uint64_t, std::shared_ptr<const std::string>> seen_states;
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
      auto s = seen_.find(top);
      if (s == seen_.end()) continue;
      for (const auto& c : chain) {
        ids[c.first][c.second].trace = s->second.trace;
        ids[c.first][c.second].flags = s->second.flags;
        ids[c.first][c.second].resolved = true;
        if (s->second.tracestate != nullptr) seen_states[uint64_t{c.first} << 32 | c.second] = s->second.tracestate;
      }
    }
  }

  if (keeping) decide_tails(in, ids, read_through_ns);

  // One shared copy per stored context a sent span's trace came from (the cache outlives the batch).
  std::unordered_map<const StoredContext*, std::shared_ptr<const std::string>> shared_states;
  const auto tracestate_of = [&](size_t t, uint32_t i, const SpanIds& id) -> std::shared_ptr<const std::string> {
    if (id.context != nullptr) {
      if (id.context->tracestate.empty()) return nullptr;
      auto& shared = shared_states[id.context];
      if (shared == nullptr) shared = std::make_shared<const std::string>(id.context->tracestate);
      return shared;
    }
    if (seen_states.empty()) return nullptr;
    auto f = seen_states.find(uint64_t{t} << 32 | i);
    return f != seen_states.end() ? f->second : nullptr;
  };
  uint64_t waiting = 0;
  for (size_t t = 0; t < in.timelines.size(); ++t) {
    const SnapshotTimeline& bt = in.timelines[t];
    const LocalIndex<std::string> attrs(bt.attrs, bt.records.size());
    const LocalIndex<StoredContext> contexts(bt.contexts, bt.records.size());
    const uint32_t tid = bt.id;
    const auto held_it = held_.find(bt.id);
    std::vector<Held> old = held_it != held_.end() ? std::move(held_it->second) : std::vector<Held>{};
    if (held_it != held_.end()) held_.erase(held_it);
    std::vector<Held> still;
    const auto hold = [&](const SpanRecord& r, uint32_t i, uint32_t reads, int64_t since) {
      Held h{r, reads, since, {}, 0, false, first(t, i), {}};
      if (const std::string* a = (r.flags & kFlagAttrs) != 0 ? attrs.find(r.local_id) : nullptr) h.attrs = *a;
      if (const StoredContext* c = (r.flags & kFlagContext) != 0 ? contexts.find(r.local_id) : nullptr) {
        h.has_context = true;
        h.context = *c;
      }
      if ((r.flags & kFlagParentElsewhere) != 0) {
        if (const uint64_t* f = foreign[t].find(r.local_id)) h.foreign = *f;
      }
      still.push_back(std::move(h));
    };
    for (uint32_t i = 0; i < bt.records.size(); ++i) {
      const SpanRecord& r = bt.records[i];
      SpanIds& id = ids[t][i];
      const uint32_t reads = i < old.size() ? old[i].reads + 1 : 1;
      const int64_t since = i < old.size() ? old[i].since_ns : now;
      if (batch.taken == max_take) {  // the consumer is full: the next read takes it
        hold(r, i, reads - 1, since);
        continue;
      }
      // With a tail keep a record waits for its root maxWait, else kMaxHoldReads reads.
      const bool may_wait = (!final || more) && waiting + still.size() < kMaxHeld &&
                            (keeping ? now - since <= tail_keep::max_wait_ns(keep_) : reads <= kMaxHoldReads);
      if (!id.resolved) {
        if (may_wait) {
          hold(r, i, reads, since);
          continue;
        }
        // Its ancestor never came (lost, or open too long): a trace of its own.
        id.trace = trace_id::derived_trace_id(salt_, make_span_id(bt.id, r.local_id));
        id.flags = sampler::trace_flags(sampler_, id.trace, false, 0);
        if (keeping) ++batch.keep_timed_out;
      } else if (keeping && (id.flags & kTraceFlagSampled) == 0) {
        auto d = decided_.find(id.trace);
        if (d == decided_.end()) {
          // Resolved (from a stored context) before its root ended: waits for it too.
          if (may_wait) {
            hold(r, i, reads, since);
            continue;
          }
          ++batch.keep_timed_out;  // the head decision alone, for the whole trace from now on
          decide(id.trace, false);
        } else if (d->second) {
          id.flags |= kTraceFlagSampled;  // kept whole by the tail keep: exported as sampled
        }
      }
      if ((id.flags & kTraceFlagSampled) == 0) {
        // Not kept: counted, never taken; its descendants follow it.
        remember(make_span_id(bt.id, r.local_id), id, nullptr);
        ++batch.sampled_out;
        if (first(t, i)) ++batch.sampled_out_first;
        continue;
      }
      const std::string* a = (r.flags & kFlagAttrs) != 0 ? attrs.find(r.local_id) : nullptr;
      std::shared_ptr<const std::string> tracestate = id.resolved ? tracestate_of(t, i, id) : nullptr;
      const uint64_t* f = (r.flags & kFlagParentElsewhere) != 0 ? foreign[t].find(r.local_id) : nullptr;
      take(Kept{t, i, &r, a, f != nullptr ? *f : 0, &id, tracestate.get()});
      remember(make_span_id(bt.id, r.local_id), id, std::move(tracestate));
      ++batch.taken;
    }
    waiting += still.size();
    if (!still.empty()) held_[tid] = std::move(still);
  }
  batch.waiting = waiting;
  elsewhere_.clear();
  return batch;
}

Snapshot kept_snapshot(const FrozenSnapshot& snap, uint64_t salt, uint64_t sampler, uint64_t keep,
                       const std::vector<std::string>& keep_names, uint64_t* left_out) {
  TraceKeep sorter(salt, sampler, keep);
  for (const std::string& n : keep_names) sorter.keep_name(n);
  for (const std::string& n : snap.names) sorter.add_name(n);
  Snapshot in;
  Snapshot out;
  out.names = snap.names;
  out.counters = snap.counters;
  out.cpu_profiles = snap.cpu_profiles;
  out.cpu_samples_dropped = snap.cpu_samples_dropped;
  for (const FrozenTimeline& tl : snap.timelines) {
    SnapshotTimeline& bt = sorter.timeline(in, tl.id, tl.kind);
    bt.records.reserve(tl.records.size());
    for (uint32_t i = 0; i < tl.records.size(); ++i) bt.records.push_back(tl.records[i]);
    bt.attrs = tl.attrs;
    bt.foreign_parents = tl.foreign_parents;
    bt.contexts = tl.contexts;
    // Every timeline is described, also one left without records.
    SnapshotTimeline& o = out.timelines.emplace_back();
    o.id = tl.id;
    o.name = tl.name;
    o.kind = tl.kind;
    o.serial = tl.serial;
    o.exited = tl.exited;
    o.counts = tl.counts;
  }
  // One final read: nothing waits, every record is taken or left out, in end order per timeline.
  const TraceKeep::Result r =
      sorter.sort(in, false, SIZE_MAX, true, INT64_MAX, [&out](const TraceKeep::Kept& k) {
        SnapshotTimeline& o = out.timelines[k.timeline];
        o.records.push_back(*k.record);
        if (k.attrs != nullptr) o.attrs.emplace_back(k.record->local_id, *k.attrs);
        if ((k.record->flags & kFlagParentElsewhere) != 0) o.foreign_parents.emplace_back(k.record->local_id, k.foreign);
      });
  *left_out = r.sampled_out;
  return out;
}

}  // namespace hotspan
