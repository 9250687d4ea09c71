#include "export/otlp_batcher.h"

namespace hotspan {
namespace {

void put_be64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

}  // namespace

OtlpBatcher::OtlpBatcher(const OtlpResource& resource, OtlpEncoding encoding, int64_t unix_offset_ns, uint64_t salt,
                         uint64_t sampler, uint64_t keep)
    : writer_(resource, encoding, unix_offset_ns), keep_(salt, sampler, keep) {}

OtlpBatcher::Result OtlpBatcher::encode(Snapshot& in, bool unread, size_t max_spans, bool final, std::string& out,
                                        int64_t read_through_ns) {
  const TraceKeep::Result r = keep_.sort(in, unread, max_spans, final, read_through_ns, [this](const TraceKeep::Kept& k) {
    OtlpSpan s;
    s.record = k.record;
    s.name = &keep_.name(k.record->name);
    s.attrs = k.attrs;
    put_be64(s.ids.trace_id, k.ids->trace.hi);
    put_be64(s.ids.trace_id + 8, k.ids->trace.lo);
    s.ids.span_id = k.ids->span;
    s.ids.parent_span_id = k.ids->parent;
    s.ids.trace_flags = k.ids->flags;
    s.ids.trace_state = k.tracestate;
    writer_.add(s);
  });
  Result batch;
  batch.spans = r.taken;
  batch.waiting = r.waiting;
  batch.sampled_out = r.sampled_out;
  batch.sampled_out_first = r.sampled_out_first;
  batch.keep_timed_out = r.keep_timed_out;
  if (batch.spans != 0) writer_.finish(out);
  return batch;
}

}  // namespace hotspan
