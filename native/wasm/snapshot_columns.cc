#include "snapshot_columns.h"

#include "record/clock.h"
#include "record/cpu_profile.h"
#include "record/stored_context.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace hotspan::wasm {

// JavaScript's Math.round (half up) of ms * 1e6: the ns the js backend means.
int64_t ms_to_ns(double ms) {
  const double x = ms * 1e6;
  double r = std::floor(x);
  if (x - r >= 0.5) r += 1;
  return static_cast<int64_t>(r);
}

namespace {

// Reads consecutive arrays out of the buffer, failing once it runs past the end.
struct Reader {
  const uint8_t* p;
  size_t left;
  // 64-bit sizes: on wasm32 a count times a width may pass 2^32.
  const uint8_t* take(uint64_t bytes) {
    if (bytes > left) return nullptr;
    const uint8_t* at = p;
    p += bytes;
    left -= bytes;
    return at;
  }
};

uint32_t u32_at(const uint8_t* p, size_t i) {
  uint32_t v;
  std::memcpy(&v, p + 4 * i, 4);
  return v;
}

// One CPU profile of the section after the strings (snapshot_columns.h).
bool decode_profile(Reader& in, Snapshot& out) {
  const uint8_t* head = in.take(16);
  if (head == nullptr) return false;
  const uint64_t frames = u32_at(head, 1), nodes = u32_at(head, 2), samples = u32_at(head, 3);
  const uint8_t* lines = in.take(8 * frames);
  const uint8_t* node_frame = in.take(4 * nodes);
  const uint8_t* node_parent = in.take(4 * nodes);
  const uint8_t* sample_node = in.take(4 * samples);
  const uint8_t* sample_ms = in.take(8 * samples);
  const uint8_t* ends = in.take(8 * frames);
  if (lines == nullptr || node_frame == nullptr || node_parent == nullptr || sample_node == nullptr ||
      sample_ms == nullptr || ends == nullptr) {
    return false;
  }
  auto p = std::make_shared<CpuProfile>();
  p->timeline = u32_at(head, 0);
  p->frames.resize(frames);
  const char* bytes = reinterpret_cast<const char*>(in.p);
  size_t from = 0;
  for (size_t f = 0; f < frames; ++f) {
    CpuFrame& fr = p->frames[f];
    fr.line = static_cast<int32_t>(u32_at(lines, 2 * f));
    fr.column = static_cast<int32_t>(u32_at(lines, 2 * f + 1));
    for (std::string* s : {&fr.function, &fr.url}) {
      const size_t to = u32_at(ends, static_cast<size_t>(s == &fr.url) + 2 * f);
      if (to < from || to > in.left) return false;
      s->assign(bytes + from, to - from);
      from = to;
    }
  }
  in.take(from);
  p->node_frame.resize(nodes);
  p->node_parent.resize(nodes);
  for (size_t i = 0; i < nodes; ++i) {
    p->node_frame[i] = u32_at(node_frame, i);
    p->node_parent[i] = static_cast<int32_t>(u32_at(node_parent, i));
  }
  p->sample_node.resize(samples);
  p->sample_ns.resize(samples);
  for (size_t k = 0; k < samples; ++k) {
    p->sample_node[k] = u32_at(sample_node, k);
    double ms;
    std::memcpy(&ms, sample_ms + 8 * k, 8);
    p->sample_ns[k] = ms_to_ns(ms);
  }
  if (!p->valid()) return false;
  out.cpu_profiles.push_back(std::move(p));
  return true;
}

}  // namespace

bool decode_columns(const uint8_t* data, size_t size, Snapshot& out) {
  Reader in{data, size};
  const uint8_t* header = in.take(4 * kHeaderWords);
  if (header == nullptr || u32_at(header, 0) != kColumnsVersion) return false;
  const uint32_t profiles = u32_at(header, 7);
  const uint64_t n = u32_at(header, 1), names = u32_at(header, 2), timelines = u32_at(header, 3),
                 attrs = u32_at(header, 4), series = u32_at(header, 5), samples = u32_at(header, 6);
  const uint8_t* times = in.take(16 * n);
  const uint8_t* sample_data = in.take(16 * samples);
  const uint8_t* fields = in.take(4 * kFieldsPerRecord * n);
  const uint8_t* tls = in.take(8 * timelines);
  const uint8_t* attr_index = in.take(4 * attrs);
  const uint8_t* series_sizes = in.take(8 * series);
  const uint8_t* ends = in.take(4 * (names + timelines + attrs + series));
  if (times == nullptr || sample_data == nullptr || fields == nullptr || tls == nullptr ||
      attr_index == nullptr || series_sizes == nullptr || ends == nullptr) {
    return false;
  }
  const char* bytes = reinterpret_cast<const char*>(in.p);
  size_t next = 0;  // string index
  size_t from = 0;  // its first byte
  auto string = [&](std::string& s) {
    const size_t to = u32_at(ends, next++);
    if (to < from || to > in.left) return false;
    s.assign(bytes + from, to - from);
    from = to;
    return true;
  };

  out.names.resize(names);
  for (std::string& s : out.names) {
    if (!string(s)) return false;
  }
  std::unordered_map<uint32_t, size_t> slot;  // timeline id -> index
  out.timelines.resize(timelines);
  for (size_t t = 0; t < timelines; ++t) {
    SnapshotTimeline& tl = out.timelines[t];
    tl.id = u32_at(tls, 2 * t);
    const uint32_t bits = u32_at(tls, 2 * t + 1);
    tl.kind = static_cast<TimelineKind>(bits & 0xff);
    tl.serial = (bits >> 8) & 1;
    tl.exited = (bits >> 9) & 1;
    if (!string(tl.name)) return false;
    slot[tl.id] = t;
  }

  std::vector<size_t> sizes(timelines);
  std::vector<uint32_t> where(n);  // record -> timeline index
  uint32_t last_id = 0;
  size_t last = 0;
  for (size_t i = 0; i < n; ++i) {
    // Records come in runs of one timeline: look up where the run changes.
    const uint32_t id = u32_at(fields, kFieldsPerRecord * i + kFieldTimeline);
    if (id != last_id || i == 0) {
      auto it = slot.find(id);
      if (it == slot.end()) return false;
      last_id = id;
      last = it->second;
    }
    where[i] = static_cast<uint32_t>(last);
    ++sizes[last];
  }
  for (size_t t = 0; t < timelines; ++t) out.timelines[t].records.reserve(sizes[t]);
  for (size_t i = 0; i < n; ++i) {
    SnapshotTimeline& tl = out.timelines[where[i]];
    const uint8_t* f = fields + 4 * kFieldsPerRecord * i;
    double ms[2];
    std::memcpy(ms, times + 16 * i, 16);
    SpanRecord r{};
    r.start_ns = ms_to_ns(ms[0]);
    r.end_ns = ms_to_ns(ms[1]);
    r.name = u32_at(f, kFieldName);
    r.local_id = u32_at(f, kFieldLocal);
    const uint32_t parent_timeline = u32_at(f, kFieldParentTimeline), parent_local = u32_at(f, kFieldParentLocal);
    const uint32_t depth_flags = u32_at(f, kFieldDepthFlags);
    r.depth = static_cast<uint16_t>(depth_flags >> 16);
    r.flags = static_cast<uint16_t>(depth_flags & ~uint32_t{kFlagParentElsewhere});
    // A parent on another timeline is a foreign parent, as the core keeps it.
    if (parent_local != 0 && parent_timeline != tl.id) {
      r.flags |= kFlagParentElsewhere;
      tl.foreign_parents.emplace_back(r.local_id, make_span_id(parent_timeline, parent_local));
    } else {
      r.parent_local = parent_local;
    }
    tl.records.push_back(r);
  }
  for (size_t a = 0; a < attrs; ++a) {
    const uint32_t i = u32_at(attr_index, a);
    if (i >= n) return false;
    SnapshotTimeline& tl = out.timelines[where[i]];
    tl.attrs.emplace_back(u32_at(fields, kFieldsPerRecord * i + kFieldLocal), std::string());
    if (!string(tl.attrs.back().second)) return false;
  }
  out.counters.resize(series);
  uint64_t sample = 0;
  for (size_t k = 0; k < series; ++k) {
    CounterSeries& c = out.counters[k];
    const uint64_t count = u32_at(series_sizes, 2 * k);
    c.dropped = u32_at(series_sizes, 2 * k + 1);
    if (count > samples - sample || !string(c.name)) return false;
    c.samples.resize(count);
    for (CounterSample& x : c.samples) {
      double pair[2];
      std::memcpy(pair, sample_data + 16 * sample++, 16);
      x.ns = ms_to_ns(pair[0]);
      x.value = pair[1];
    }
  }
  if (sample != samples) return false;
  // The CPU profiles, after the strings.
  Reader rest{in.p + from, in.left - from};
  for (uint32_t k = 0; k < profiles; ++k) {
    if (!decode_profile(rest, out)) return false;
  }
  return true;
}

void encode_columns(const FrozenSnapshot& snap, int64_t origin_ns, std::string& out) {
  uint64_t n = 0, attrs = 0, samples = 0;
  for (const FrozenTimeline& tl : snap.timelines) {
    n += tl.records.size();
    attrs += tl.attrs.size();
  }
  for (const CounterSeries& c : snap.counters) samples += c.samples.size();
  std::vector<double> times;
  std::vector<uint32_t> fields, attr_index, ends;
  std::string bytes;
  times.reserve(2 * n);
  fields.reserve(kFieldsPerRecord * n);
  std::vector<const std::string*> attr_texts;
  attr_texts.reserve(attrs);
  std::vector<std::pair<uint32_t, const StoredContext*>> contexts;
  auto text = [&](const std::string& s) {
    bytes += s;
    ends.push_back(static_cast<uint32_t>(bytes.size()));
  };
  uint32_t index = 0;
  for (const FrozenTimeline& tl : snap.timelines) {
    std::unordered_map<uint32_t, uint64_t> foreign(tl.foreign_parents.begin(), tl.foreign_parents.end());
    std::unordered_map<uint32_t, const std::string*> texts;
    for (const auto& [local, json] : tl.attrs) texts[local] = &json;
    std::unordered_map<uint32_t, const StoredContext*> stored;
    for (const auto& [local, ctx] : tl.contexts) stored[local] = &ctx;
    for (const SpanRecord r : tl.records) {
      uint32_t parent_timeline = 0, parent_local = 0;
      if (r.flags & kFlagParentElsewhere) {
        auto it = foreign.find(r.local_id);
        if (it != foreign.end()) {
          parent_timeline = static_cast<uint32_t>(it->second >> 32);
          parent_local = static_cast<uint32_t>(it->second);
        }
      } else if (r.parent_local != 0) {
        parent_timeline = tl.id;
        parent_local = r.parent_local;
      }
      times.push_back(clock::to_ms(r.start_ns, origin_ns));
      times.push_back(clock::to_ms(r.end_ns, origin_ns));
      const uint32_t f[kFieldsPerRecord] = {r.name, tl.id, r.local_id, parent_timeline, parent_local,
                                            (static_cast<uint32_t>(r.depth) << 16) | r.flags};
      fields.insert(fields.end(), f, f + kFieldsPerRecord);
      if (r.flags & kFlagAttrs) {
        auto it = texts.find(r.local_id);
        if (it != texts.end()) {
          attr_index.push_back(index);
          attr_texts.push_back(it->second);
        }
      }
      if (r.flags & kFlagContext) {
        auto it = stored.find(r.local_id);
        if (it != stored.end()) contexts.emplace_back(index, it->second);
      }
      ++index;
    }
  }
  const uint32_t header[kHeaderWords] = {kColumnsVersion,
                                         static_cast<uint32_t>(n),
                                         static_cast<uint32_t>(snap.names.size()),
                                         static_cast<uint32_t>(snap.timelines.size()),
                                         static_cast<uint32_t>(attr_index.size()),
                                         static_cast<uint32_t>(snap.counters.size()),
                                         static_cast<uint32_t>(samples),
                                         0};
  auto put = [&out](const void* p, size_t size) { out.append(static_cast<const char*>(p), size); };
  put(header, sizeof header);
  put(times.data(), 8 * times.size());
  for (const CounterSeries& c : snap.counters) {
    for (const CounterSample& s : c.samples) {
      const double pair[2] = {clock::to_ms(s.ns, origin_ns), s.value};
      put(pair, sizeof pair);
    }
  }
  put(fields.data(), 4 * fields.size());
  for (const FrozenTimeline& tl : snap.timelines) {
    const uint32_t desc[2] = {tl.id, static_cast<uint32_t>(tl.kind) | (tl.serial ? 1u << 8 : 0) |
                                         (tl.exited ? 1u << 9 : 0)};
    put(desc, sizeof desc);
  }
  put(attr_index.data(), 4 * attr_index.size());
  for (const CounterSeries& c : snap.counters) {
    const uint32_t sizes[2] = {static_cast<uint32_t>(c.samples.size()), static_cast<uint32_t>(c.dropped)};
    put(sizes, sizeof sizes);
  }
  for (const std::string& s : snap.names) text(s);
  for (const FrozenTimeline& tl : snap.timelines) text(tl.name);
  for (const std::string* s : attr_texts) text(*s);
  for (const CounterSeries& c : snap.counters) text(c.name);
  put(ends.data(), 4 * ends.size());
  out += bytes;
  const uint32_t count = static_cast<uint32_t>(contexts.size());
  put(&count, 4);
  for (const auto& [at, c] : contexts) {
    const uint32_t head[2] = {at, c->flags};
    const uint64_t ids[3] = {c->trace.hi, c->trace.lo, c->parent_wire};
    const uint32_t size = static_cast<uint32_t>(c->tracestate.size());
    put(head, sizeof head);
    put(ids, sizeof ids);
    put(&size, 4);
  }
  for (const auto& [at, c] : contexts) out += c->tracestate;
}

}  // namespace hotspan::wasm
