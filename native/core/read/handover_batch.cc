#include "read/handover_batch.h"

#include <cstring>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "record/span_record.h"

namespace hotspan {
namespace {

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_text(std::string& out, std::string_view s) {
  put(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// Reads a batch front to back; every read fails once past the end.
struct Reader {
  const uint8_t* p;
  size_t left;
  template <typename T>
  bool get(T& v) {
    if (left < sizeof v) return false;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    left -= sizeof v;
    return true;
  }
  bool text(std::string_view& s) {
    uint32_t n = 0;
    if (!get(n) || left < n) return false;
    s = std::string_view(reinterpret_cast<const char*>(p), n);
    p += n;
    left -= n;
    return true;
  }
};

// A batch's header: u32 kHandoverVersion, first new name id, new names,
// records (all sections), u64 lost since the last batch.
struct Header {
  uint32_t first_name = 0;
  uint32_t names = 0;
  uint32_t records = 0;
  uint64_t lost = 0;
};

bool read_header(Reader& in, Header& h) {
  uint32_t version = 0;
  return in.get(version) && version == kHandoverVersion && in.get(h.first_name) && in.get(h.names) &&
         in.get(h.records) && in.get(h.lost);
}

}  // namespace

std::unique_ptr<HandoverSource> HandoverSource::open(std::shared_ptr<const Tracer> tracer) {
  auto cursor = RecordCursor::open(tracer);
  if (!cursor) return nullptr;
  return std::unique_ptr<HandoverSource>(new HandoverSource(std::move(tracer), std::move(cursor)));
}

HandoverSource::HandoverSource(std::shared_ptr<const Tracer> tracer, std::unique_ptr<RecordCursor> cursor)
    : tracer_(std::move(tracer)), cursor_(std::move(cursor)) {}

namespace {

bool carried(TimelineKind kind) {
  return kind == TimelineKind::kJs || kind == TimelineKind::kNative || kind == TimelineKind::kTrack ||
         kind == TimelineKind::kGroups;
}

void put_records(std::string& out, const FrozenTimeline& tl) {
  std::unordered_map<uint32_t, std::string_view> attrs;
  for (const auto& [local, json] : tl.attrs) attrs[local] = json;
  std::unordered_map<uint32_t, uint64_t> foreign(tl.foreign_parents.begin(), tl.foreign_parents.end());
  std::unordered_map<uint32_t, const StoredContext*> contexts;
  for (const auto& [local, c] : tl.contexts) contexts[local] = &c;
  for (const SpanRecord r : tl.records) {
    auto a = attrs.find(r.local_id);
    auto f = foreign.find(r.local_id);
    auto c = contexts.find(r.local_id);
    uint16_t flags = r.flags & (kFlagAbandoned | kFlagError);
    if (f != foreign.end()) flags |= kFlagParentElsewhere;
    if (c != contexts.end()) flags |= kFlagContext;
    put(out, r.start_ns);
    put(out, r.end_ns);
    put(out, r.local_id);
    put(out, r.parent_local);
    put(out, r.name);
    put(out, r.depth);
    put(out, flags);
    put_text(out, a == attrs.end() ? std::string_view() : a->second);
    if (f != foreign.end()) put(out, f->second);
    if (c != contexts.end()) {
      const StoredContext& ctx = *c->second;
      put(out, ctx.trace.hi);
      put(out, ctx.trace.lo);
      put(out, ctx.parent_wire);
      put(out, static_cast<uint32_t>(ctx.flags));
      put_text(out, ctx.tracestate);
    }
  }
}

}  // namespace

uint64_t HandoverSource::take(std::string& out, uint64_t max_records) {
  out.clear();
  FrozenSnapshot batch;
  cursor_->next(batch, max_records);
  // Lost so far: every timeline's overwritten and dropped records (what the
  // cursor missed is among the overwritten; what it read is released).
  uint64_t lost = 0;
  for (const TimelineCounts& tl : tracer_->counts()) lost += tl.counts.overwritten + tl.counts.dropped;
  const std::vector<std::string> names = tracer_->names();
  const uint32_t first_name = names_sent_;
  uint64_t n = 0;
  uint32_t sections = 0;
  for (const FrozenTimeline& tl : batch.timelines) {
    if (!carried(tl.kind) || tl.records.size() == 0) continue;
    n += tl.records.size();
    ++sections;
  }
  put(out, kHandoverVersion);
  put(out, first_name);
  put(out, static_cast<uint32_t>(names.size() - first_name));
  put(out, static_cast<uint32_t>(n));
  put(out, lost - lost_sent_);
  for (size_t i = first_name; i < names.size(); ++i) put_text(out, names[i]);
  put(out, sections);
  for (const FrozenTimeline& tl : batch.timelines) {
    if (!carried(tl.kind) || tl.records.size() == 0) continue;
    put(out, static_cast<uint8_t>(tl.kind));
    put(out, static_cast<uint8_t>(tl.serial ? 1 : 0));
    put(out, static_cast<uint16_t>(0));
    put(out, tl.id);
    put_text(out, tl.kind == TimelineKind::kTrack ? std::string_view(tl.name) : std::string_view());
    put(out, static_cast<uint32_t>(tl.records.size()));
    put_records(out, tl);
  }
  names_sent_ = static_cast<uint32_t>(names.size());
  lost_sent_ = lost;
  return n;
}

Status import_batch(ImportedThread& into, const uint8_t* data, size_t size, uint64_t* stored) {
  *stored = 0;
  Reader in{data, size};
  Header h;
  if (!read_header(in, h)) return Status::kInvalid;
  for (uint32_t i = 0; i < h.names; ++i) {
    std::string_view name;
    if (!in.text(name) || !into.add_name(h.first_name + i, name)) return Status::kInvalid;
  }
  uint32_t sections = 0;
  if (!in.get(sections)) return Status::kInvalid;
  uint64_t seen = 0;
  for (uint32_t k = 0; k < sections; ++k) {
    uint8_t kind = 0, serial = 0;
    uint16_t pad = 0;
    uint32_t id = 0, count = 0;
    std::string_view track;
    if (!in.get(kind) || !in.get(serial) || !in.get(pad) || !in.get(id) || !in.text(track) || !in.get(count) ||
        kind > static_cast<uint8_t>(TimelineKind::kGroups) || count > h.records - seen) {
      return Status::kInvalid;
    }
    seen += count;
    for (uint32_t i = 0; i < count; ++i) {
      ImportedSpan s;
      std::string_view attrs;
      if (!in.get(s.start_ns) || !in.get(s.end_ns) || !in.get(s.local) || !in.get(s.parent_local) ||
          !in.get(s.name) || !in.get(s.depth) || !in.get(s.flags) || !in.text(attrs)) {
        return Status::kInvalid;
      }
      uint64_t foreign = 0;
      if ((s.flags & kFlagParentElsewhere) != 0 && !in.get(foreign)) return Status::kInvalid;
      StoredContext ctx;
      const bool has_ctx = (s.flags & kFlagContext) != 0;
      if (has_ctx) {
        uint32_t flags = 0;
        std::string_view tracestate;
        if (!in.get(ctx.trace.hi) || !in.get(ctx.trace.lo) || !in.get(ctx.parent_wire) || !in.get(flags) ||
            !in.text(tracestate)) {
          return Status::kInvalid;
        }
        ctx.flags = static_cast<uint8_t>(flags);
        ctx.tracestate = std::string(tracestate);
      }
      Status st = Status::kOk;
      switch (static_cast<TimelineKind>(kind)) {
        case TimelineKind::kTrack:
          st = into.add_track_span(id, track, serial != 0, s, attrs, has_ctx ? &ctx : nullptr, foreign);
          break;
        case TimelineKind::kGroups:
          st = into.add_group(s, attrs);
          break;
        default:
          st = into.add(s, attrs, has_ctx ? &ctx : nullptr, foreign);
      }
      if (st != Status::kOk) return st;
      ++*stored;
    }
  }
  if (seen != h.records) return Status::kInvalid;
  // Counted once the batch's records are in: a lost span is never counted twice.
  // A refused batch (strip_records) has no records left to count: the
  // sender's hub counted them lost when back-pressure refused them.
  into.count_lost(h.lost);
  return in.left == 0 ? Status::kOk : Status::kInvalid;
}

Status strip_records(std::string& batch) {
  Reader in{reinterpret_cast<const uint8_t*>(batch.data()), batch.size()};
  Header h;
  if (!read_header(in, h)) return Status::kInvalid;
  for (uint32_t i = 0; i < h.names; ++i) {
    std::string_view name;
    if (!in.text(name)) return Status::kInvalid;
  }
  constexpr size_t kRecordsAt = 3 * sizeof(uint32_t);  // the header's record count
  batch.resize(batch.size() - in.left);
  std::memset(&batch[kRecordsAt], 0, sizeof(uint32_t));
  put(batch, static_cast<uint32_t>(0));  // no section
  return Status::kOk;
}

}  // namespace hotspan
