#include "snapshot_convert.h"

#include <unordered_map>

#include "record/clock.h"

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

// Fills the columns of the NativeSnapshot shape, one record at a time.
class ColumnsOut {
 public:
  ColumnsOut(Napi::Env env, FrozenView& view, size_t count)
      : env_(env),
        view_(view),
        count_(count),
        times_buf_(Napi::ArrayBuffer::New(env, count * 2 * sizeof(double))),
        fields_buf_(Napi::ArrayBuffer::New(env, count * hotspan::kFieldsPerRecord * sizeof(uint32_t))),
        times_(static_cast<double*>(times_buf_.Data())),
        fields_(static_cast<uint32_t*>(fields_buf_.Data())),
        attrs_(Napi::Array::New(env)) {}

  // Record i of timeline t, as the next record.
  void Add(size_t t, uint32_t i) {
    const hotspan::FrozenTimeline& tl = view_.snapshot.timelines[t];
    const hotspan::SpanRecord r = tl.records[i];
    const bool lookup = (r.flags & (hotspan::kFlagParentElsewhere | hotspan::kFlagAttrs)) != 0;
    const FrozenView::Lookups* l = lookup ? &view_.lookups(t) : nullptr;
    times_[next_ * 2] = hotspan::clock::to_ms(r.start_ns, view_.origin_ns);
    times_[next_ * 2 + 1] = hotspan::clock::to_ms(r.end_ns, view_.origin_ns);
    uint32_t parent_timeline = 0;
    uint32_t parent_local = 0;
    if (r.flags & hotspan::kFlagParentElsewhere) {
      auto it = l->foreign.find(r.local_id);
      if (it != l->foreign.end()) {
        parent_timeline = static_cast<uint32_t>(it->second >> 32);
        parent_local = static_cast<uint32_t>(it->second);
      }
    } else if (r.parent_local != 0) {
      parent_timeline = tl.id;
      parent_local = r.parent_local;
    }
    uint32_t* f = fields_ + next_ * hotspan::kFieldsPerRecord;
    f[hotspan::kFieldName] = r.name;
    f[hotspan::kFieldTimeline] = tl.id;
    f[hotspan::kFieldLocal] = r.local_id;
    f[hotspan::kFieldParentTimeline] = parent_timeline;
    f[hotspan::kFieldParentLocal] = parent_local;
    f[hotspan::kFieldDepthFlags] = (static_cast<uint32_t>(r.depth) << 16) | r.flags;
    if (r.flags & hotspan::kFlagAttrs) {
      auto it = l->attrs.find(r.local_id);
      if (it != l->attrs.end()) {
        Napi::Array pair = Napi::Array::New(env_, 2);
        pair.Set(0u, Napi::Number::New(env_, static_cast<double>(next_)));
        pair.Set(1u, Napi::String::New(env_, *it->second));
        attrs_.Set(attr_count_++, pair);
      }
    }
    ++next_;
  }

  Napi::Object Done() {
    const hotspan::FrozenSnapshot& snapshot = view_.snapshot;
    Napi::Array names = Napi::Array::New(env_, snapshot.names.size());
    for (uint32_t i = 0; i < snapshot.names.size(); ++i) {
      names.Set(i, Napi::String::New(env_, snapshot.names[i]));
    }
    Napi::Array timelines = Napi::Array::New(env_, snapshot.timelines.size());
    for (uint32_t t = 0; t < snapshot.timelines.size(); ++t) {
      const hotspan::FrozenTimeline& tl = snapshot.timelines[t];
      Napi::Object info = Napi::Object::New(env_);
      info.Set("id", Napi::Number::New(env_, tl.id));
      info.Set("name", Napi::String::New(env_, tl.name));
      info.Set("kind", Napi::String::New(env_, KindName(tl.kind)));
      info.Set("exited", Napi::Boolean::New(env_, tl.exited));
      timelines.Set(t, info);
    }
    Napi::Object out = Napi::Object::New(env_);
    out.Set("names", names);
    out.Set("timelines", timelines);
    out.Set("count", Napi::Number::New(env_, static_cast<double>(count_)));
    out.Set("times", Napi::Float64Array::New(env_, count_ * 2, times_buf_, 0));
    out.Set("fields", Napi::Uint32Array::New(env_, count_ * hotspan::kFieldsPerRecord, fields_buf_, 0));
    out.Set("attrs", attrs_);
    return out;
  }

 private:
  Napi::Env env_;
  FrozenView& view_;
  size_t count_;
  Napi::ArrayBuffer times_buf_, fields_buf_;
  double* times_;
  uint32_t* fields_;
  Napi::Array attrs_;
  uint32_t attr_count_ = 0;
  size_t next_ = 0;
};

}  // namespace

Napi::Object RecordsToJs(Napi::Env env, FrozenView& view, uint64_t offset, uint64_t count) {
  ColumnsOut out(env, view, count);
  if (count == 0) return out.Done();
  size_t t;
  uint32_t i;
  view.query.locate(offset, t, i);
  for (uint64_t left = count; left > 0;) {
    const uint32_t size = view.snapshot.timelines[t].records.size();
    for (; i < size && left > 0; ++i, --left) out.Add(t, i);
    ++t;
    i = 0;
  }
  return out.Done();
}

Napi::Object RecordsToJs(Napi::Env env, FrozenView& view, const std::vector<uint64_t>& indices) {
  ColumnsOut out(env, view, indices.size());
  for (uint64_t index : indices) {
    size_t t;
    uint32_t i;
    view.query.locate(index, t, i);
    out.Add(t, i);
  }
  return out.Done();
}

Napi::Array CountersToJs(Napi::Env env, const FrozenView& view) {
  const auto& all = view.snapshot.counters;
  Napi::Array counters = Napi::Array::New(env, all.size());
  for (uint32_t k = 0; k < all.size(); ++k) {
    const hotspan::CounterSeries& c = all[k];
    const size_t n = c.samples.size();
    Napi::Float64Array ms = Napi::Float64Array::New(env, n);
    Napi::Float64Array values = Napi::Float64Array::New(env, n);
    for (size_t i = 0; i < n; ++i) {
      ms[i] = hotspan::clock::to_ms(c.samples[i].ns, view.origin_ns);
      values[i] = c.samples[i].value;
    }
    Napi::Object series = Napi::Object::New(env);
    series.Set("name", Napi::String::New(env, c.name));
    series.Set("times", ms);
    series.Set("values", values);
    series.Set("dropped", Napi::Number::New(env, static_cast<double>(c.dropped)));
    counters.Set(k, series);
  }
  return counters;
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
