#include "snapshot_convert.h"

#include <unordered_map>

#include "clock.h"

namespace hotspan_addon {

namespace {

const char* KindName(hotspan::TimelineKind kind) {
  switch (kind) {
    case hotspan::TimelineKind::kJs: return "js";
    case hotspan::TimelineKind::kNative: return "native";
    case hotspan::TimelineKind::kTrack: return "track";
    case hotspan::TimelineKind::kGroups: return "groups";
  }
  return "native";
}

constexpr size_t kFieldsPerRecord = 6;

}  // namespace

Napi::Object SnapshotToJs(Napi::Env env, const hotspan::FrozenSnapshot& snapshot, int64_t origin_ns) {
  size_t count = 0;
  for (const auto& tl : snapshot.timelines) count += tl.records.size();

  Napi::Array names = Napi::Array::New(env, snapshot.names.size());
  for (uint32_t i = 0; i < snapshot.names.size(); ++i) {
    names.Set(i, Napi::String::New(env, snapshot.names[i]));
  }

  Napi::ArrayBuffer times_buf = Napi::ArrayBuffer::New(env, count * 2 * sizeof(double));
  Napi::ArrayBuffer fields_buf =
      Napi::ArrayBuffer::New(env, count * kFieldsPerRecord * sizeof(uint32_t));
  auto* times = static_cast<double*>(times_buf.Data());
  auto* fields = static_cast<uint32_t*>(fields_buf.Data());

  Napi::Array timelines = Napi::Array::New(env, snapshot.timelines.size());
  Napi::Array attrs = Napi::Array::New(env);
  uint32_t attr_count = 0;
  size_t index = 0;  // record index across timelines
  std::unordered_map<uint32_t, uint64_t> foreign;
  std::unordered_map<uint32_t, size_t> index_of_local;

  for (uint32_t t = 0; t < snapshot.timelines.size(); ++t) {
    const hotspan::FrozenTimeline& tl = snapshot.timelines[t];
    Napi::Object info = Napi::Object::New(env);
    info.Set("id", Napi::Number::New(env, tl.id));
    info.Set("name", Napi::String::New(env, tl.name));
    info.Set("kind", Napi::String::New(env, KindName(tl.kind)));
    info.Set("exited", Napi::Boolean::New(env, tl.exited));
    timelines.Set(t, info);

    foreign.clear();
    for (const auto& fp : tl.foreign_parents) foreign.emplace(fp.first, fp.second);
    index_of_local.clear();
    const bool has_attrs = !tl.attrs.empty();

    for (const hotspan::SpanRecord& r : tl.records) {
      times[index * 2] = hotspan::clock::to_ms(r.start_ns, origin_ns);
      times[index * 2 + 1] = hotspan::clock::to_ms(r.end_ns, origin_ns);
      uint32_t parent_timeline = 0;
      uint32_t parent_local = 0;
      if (r.flags & hotspan::kFlagParentElsewhere) {
        auto it = foreign.find(r.local_id);
        if (it != foreign.end()) {
          parent_timeline = static_cast<uint32_t>(it->second >> 32);
          parent_local = static_cast<uint32_t>(it->second);
        }
      } else if (r.parent_local != 0) {
        parent_timeline = tl.id;
        parent_local = r.parent_local;
      }
      uint32_t* f = fields + index * kFieldsPerRecord;
      f[0] = r.name;
      f[1] = tl.id;
      f[2] = r.local_id;
      f[3] = parent_timeline;
      f[4] = parent_local;
      f[5] = (static_cast<uint32_t>(r.depth) << 16) | r.flags;
      if (has_attrs) index_of_local.emplace(r.local_id, index);
      ++index;
    }

    for (const auto& a : tl.attrs) {
      auto it = index_of_local.find(a.first);
      if (it == index_of_local.end()) continue;  // attrs of a record not committed yet
      Napi::Array pair = Napi::Array::New(env, 2);
      pair.Set(0u, Napi::Number::New(env, static_cast<double>(it->second)));
      pair.Set(1u, Napi::String::New(env, a.second));
      attrs.Set(attr_count++, pair);
    }
  }

  Napi::Object out = Napi::Object::New(env);
  out.Set("names", names);
  out.Set("timelines", timelines);
  out.Set("count", Napi::Number::New(env, static_cast<double>(count)));
  out.Set("times", Napi::Float64Array::New(env, count * 2, times_buf, 0));
  out.Set("fields", Napi::Uint32Array::New(env, count * kFieldsPerRecord, fields_buf, 0));
  out.Set("attrs", attrs);

  Napi::Array counters = Napi::Array::New(env, snapshot.counters.size());
  for (uint32_t k = 0; k < snapshot.counters.size(); ++k) {
    const hotspan::CounterSeries& c = snapshot.counters[k];
    const size_t n = c.samples.size();
    Napi::Float64Array ms = Napi::Float64Array::New(env, n);
    Napi::Float64Array values = Napi::Float64Array::New(env, n);
    for (size_t i = 0; i < n; ++i) {
      ms[i] = hotspan::clock::to_ms(c.samples[i].ns, origin_ns);
      values[i] = c.samples[i].value;
    }
    Napi::Object series = Napi::Object::New(env);
    series.Set("name", Napi::String::New(env, c.name));
    series.Set("times", ms);
    series.Set("values", values);
    series.Set("dropped", Napi::Number::New(env, static_cast<double>(c.dropped)));
    counters.Set(k, series);
  }
  out.Set("counters", counters);
  return out;
}

Napi::Array StatsToJs(Napi::Env env, const std::vector<hotspan::StatsRow>& rows,
                      const hotspan::Tracer& tracer) {
  Napi::Array out = Napi::Array::New(env, rows.size());
  for (uint32_t i = 0; i < rows.size(); ++i) {
    const hotspan::StatsRow& r = rows[i];
    Napi::Object row = Napi::Object::New(env);
    row.Set("name", Napi::String::New(env, tracer.name_of(r.name)));
    row.Set("count", Napi::Number::New(env, static_cast<double>(r.count)));
    row.Set("totalNs", Napi::Number::New(env, static_cast<double>(r.total_ns)));
    row.Set("minNs", Napi::Number::New(env, static_cast<double>(r.min_ns)));
    row.Set("maxNs", Napi::Number::New(env, static_cast<double>(r.max_ns)));
    row.Set("meanNs", Napi::Number::New(env, r.mean_ns));
    row.Set("p50Ns", Napi::Number::New(env, r.p50_ns));
    row.Set("p90Ns", Napi::Number::New(env, r.p90_ns));
    row.Set("p99Ns", Napi::Number::New(env, r.p99_ns));
    out.Set(i, row);
  }
  return out;
}

}  // namespace hotspan_addon
