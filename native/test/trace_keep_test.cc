// TraceKeep (read/trace_keep.h), the one sampling decision the OTLP export,
// tracer.stream() and a write of a sampling tracer act on: kept traces taken
// whole, the others counted once, a trace decided only once the read
// watermark has passed its root (a failed span on another timeline read
// later still keeps it), a whole-snapshot decision (kept_snapshot) for a
// root still open, and a stream that writes only its kept traces.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "check.h"
#include "read/record_cursor.h"
#include "read/trace_keep.h"
#include "record/sampler.h"
#include "record/tail_keep.h"
#include "record/thread_state.h"
#include "record/tracer.h"
#include "write/trace_stream.h"

using namespace hotspan;

namespace {

// Keeps errors and roots longer than 1 us (1000 ns: the tracer's times are ns here).
uint64_t keep_word() {
  return tail_keep::kKeepErrors | tail_keep::kKeepSlow | uint64_t{1} | (tail_keep::kMaxWaitMs << tail_keep::kWaitShift);
}

std::shared_ptr<Tracer> sampling_tracer(uint64_t keep) {
  TracerOptions o;
  o.sampler = sampler::kRootOff;  // the head sampler keeps nothing
  o.keep = keep;
  return Tracer::create(o);
}

// Reads every record through a cursor in reads of `per_read`, as a consumer
// does, into `keep`; the names of the records taken, by count. Records
// another cursor read first (RecordCursor::first_read) are marked so, as the
// export and a stream mark them.
struct Sorted {
  std::map<std::string, int> taken;
  uint64_t sampled_out = 0, sampled_out_first = 0, timed_out = 0, waiting = 0;
};
// One read; false once nothing was new (after the final read, when `final`).
bool read_once(TraceKeep& keep, RecordCursor& cur, uint64_t per_read, bool final, Sorted& out) {
  FrozenSnapshot batch;
  const bool got = cur.next(batch, per_read);
  const bool last = final && !got;
  if (!got && !last) return false;
  for (size_t i = keep.names(); i < batch.names.size(); ++i) keep.add_name(batch.names[i]);
  Snapshot in;
  for (size_t k = 0; k < batch.timelines.size(); ++k) {
    const FrozenTimeline& tl = batch.timelines[k];
    SnapshotTimeline& bt = keep.timeline(in, tl.id, tl.kind);
    const auto held = static_cast<uint32_t>(bt.records.size());
    keep.read_first_elsewhere(in.timelines.size() - 1, held, held + cur.first_read()[k]);
    for (uint32_t i = 0; i < tl.records.size(); ++i) bt.records.push_back(tl.records[i]);
    bt.attrs.insert(bt.attrs.end(), tl.attrs.begin(), tl.attrs.end());
    bt.foreign_parents.insert(bt.foreign_parents.end(), tl.foreign_parents.begin(), tl.foreign_parents.end());
    bt.contexts.insert(bt.contexts.end(), tl.contexts.begin(), tl.contexts.end());
  }
  const TraceKeep::Result r = keep.sort(in, got, SIZE_MAX, last, last ? INT64_MAX : cur.read_through_ns(),
                                        [&](const TraceKeep::Kept& k) { ++out.taken[keep.name(k.record->name)]; });
  out.sampled_out += r.sampled_out;
  out.sampled_out_first += r.sampled_out_first;
  out.timed_out += r.keep_timed_out;
  out.waiting = r.waiting;
  return !last;
}
Sorted read_all(const std::shared_ptr<Tracer>& t, TraceKeep& keep, RecordCursor& cur, uint64_t per_read, bool final) {
  Sorted out;
  for (int k = 0; k < 64 && read_once(keep, cur, per_read, final, out);) ++k;
  (void)t;
  return out;
}

// Three traces: 'req' fast, with a failed span 'fail' on a track that ended
// before the root and a child; 'slow' (5 us) with a child; 'other' fast,
// with a child. Reads of 2 records take the main timeline's records first,
// so the failed span comes after its root was read.
void kept_traces_are_taken_whole_and_the_others_counted_once() {
  auto t = sampling_tracer(keep_word());
  auto main = t->attach_js_thread("main");
  const uint32_t tl = timeline_id(*main);
  const uint32_t track = t->track("net", false);
  auto cur = RecordCursor::open(t);
  const uint32_t req = t->intern("req"), child = t->intern("child"), fail = t->intern("fail");
  const uint32_t slow = t->intern("slow"), schild = t->intern("slow.child");
  const uint32_t other = t->intern("other"), ochild = t->intern("other.child");
  CHECK_EQ(begin(*main, req, 10), Status::kOk);
  const uint64_t io = t->async_begin(track, fail, 11, {}, make_span_id(tl, 1));
  CHECK(t->async_end(io, 20, kFlagError) == Status::kOk);
  CHECK_EQ(begin(*main, child, 21), Status::kOk);
  CHECK_EQ(end(*main, 25), Status::kOk);
  CHECK_EQ(end(*main, 30), Status::kOk);
  CHECK_EQ(begin(*main, slow, 100), Status::kOk);
  CHECK_EQ(begin(*main, schild, 200), Status::kOk);
  CHECK_EQ(end(*main, 300), Status::kOk);
  CHECK_EQ(end(*main, 5100), Status::kOk);
  CHECK_EQ(begin(*main, other, 6000), Status::kOk);
  CHECK_EQ(begin(*main, ochild, 6001), Status::kOk);
  CHECK_EQ(end(*main, 6002), Status::kOk);
  CHECK_EQ(end(*main, 6010), Status::kOk);
  t->flush();
  TraceKeep keep(t->id_salt(), t->sampler(), t->keep());
  const Sorted s = read_all(t, keep, *cur, 2, false);
  const std::map<std::string, int> want{{"req", 1}, {"child", 1}, {"fail", 1}, {"slow", 1}, {"slow.child", 1}};
  CHECK(s.taken == want);
  CHECK_EQ(s.sampled_out, uint64_t{2});  // 'other' and its child, once each
  CHECK_EQ(s.timed_out, uint64_t{0});
  CHECK_EQ(s.waiting, uint64_t{0});
  CHECK_EQ(keep.held(), size_t{0});
}

// Two consumers read the same records, in turns of 3 and 5 records: each
// leaves out every record of the traces not kept (its own count), and
// between them each such record is counted once as read first
// (Result::sampled_out_first), also the records one held for their root.
void two_consumers_count_a_record_left_out_once() {
  auto t = sampling_tracer(keep_word());
  auto main = t->attach_js_thread("main");
  auto a = RecordCursor::open(t);
  auto b = RecordCursor::open(t);
  const uint32_t req = t->intern("req"), child = t->intern("child"), bad = t->intern("bad");
  int64_t now = 10;
  for (int i = 0; i < 10; ++i) {  // every 4th tree keeps for its failed child
    CHECK_EQ(begin(*main, req, now), Status::kOk);
    CHECK_EQ(begin(*main, i % 4 == 0 ? bad : child, now + 1), Status::kOk);
    CHECK_EQ(end(*main, now + 2, static_cast<uint16_t>(i % 4 == 0 ? kFlagError : 0)), Status::kOk);
    CHECK_EQ(end(*main, now + 3), Status::kOk);
    now += 10;
  }
  t->flush();
  TraceKeep ka(t->id_salt(), t->sampler(), t->keep()), kb(t->id_salt(), t->sampler(), t->keep());
  Sorted sa, sb;
  bool more_a = true, more_b = true;
  for (int k = 0; k < 64 && (more_a || more_b); ++k) {
    if (k % 2 == 0 && more_a) more_a = read_once(ka, *a, 3, true, sa);
    if (k % 2 == 1 && more_b) more_b = read_once(kb, *b, 5, true, sb);
  }
  CHECK_EQ(sa.sampled_out, uint64_t{14});  // 7 trees of 2 spans not kept
  CHECK_EQ(sb.sampled_out, uint64_t{14});
  CHECK_EQ(sa.sampled_out_first + sb.sampled_out_first, uint64_t{14});
  CHECK(sa.sampled_out_first != 0 && sb.sampled_out_first != 0);  // both read some first
  CHECK_EQ(sa.taken["bad"] + sa.taken["req"], 6);
  CHECK_EQ(sb.taken["bad"] + sb.taken["req"], 6);
}

// Without a tail keep, a sampler word of 0 (parentbased_always_on) is not
// sampling; the head sampler alone decides when the word drops roots.
void samples_says_which_tracers_sample() {
  CHECK(!TraceKeep::samples(0, 0, {}));
  CHECK(TraceKeep::samples(sampler::kRootOff, 0, {}));
  CHECK(TraceKeep::samples(0, keep_word(), {}));
  CHECK(TraceKeep::samples(0, tail_keep::kMaxWaitMs << tail_keep::kWaitShift, {"pay"}));
}

// A whole snapshot: a failed root is kept; a fast root is left out; the child
// of a root still open is decided by the head sampler alone (left out), as is
// a root-less record.
void kept_snapshot_keeps_the_kept_traces_and_decides_open_roots_by_the_head() {
  auto t = sampling_tracer(keep_word());
  auto main = t->attach_js_thread("main");
  const uint32_t ok = t->intern("ok"), bad = t->intern("bad"), inner = t->intern("inner"), open = t->intern("open");
  CHECK_EQ(begin(*main, ok, 10), Status::kOk);
  CHECK_EQ(end(*main, 20), Status::kOk);
  CHECK_EQ(begin(*main, bad, 30), Status::kOk);
  CHECK_EQ(begin(*main, inner, 31), Status::kOk);
  CHECK_EQ(end(*main, 32), Status::kOk);
  CHECK_EQ(end(*main, 40, kFlagError), Status::kOk);
  CHECK_EQ(begin(*main, open, 50), Status::kOk);
  CHECK_EQ(begin(*main, inner, 51), Status::kOk);
  CHECK_EQ(end(*main, 52, kFlagError), Status::kOk);  // its root never ends in this snapshot
  t->flush();
  const FrozenSnapshot snap = t->freeze();
  uint64_t left_out = 0;
  const Snapshot kept = kept_snapshot(snap, t->id_salt(), t->sampler(), t->keep(), t->keep_names(), &left_out);
  CHECK_EQ(kept.timelines.size(), snap.timelines.size());
  std::vector<std::string> names;
  for (const auto& tl : kept.timelines) {
    for (const SpanRecord& r : tl.records) names.push_back(kept.names[r.name]);
  }
  CHECK(names == (std::vector<std::string>{"inner", "bad"}));
  CHECK_EQ(left_out, uint64_t{2});  // 'ok', and the open root's child
  // With the head sampler keeping everything, everything is kept.
  TracerOptions all;
  all.keep = keep_word();
  auto u = Tracer::create(all);
  auto th = u->attach_js_thread("main");
  const uint32_t n = u->intern("n");
  for (int64_t i = 0; i < 10; ++i) {
    CHECK_EQ(begin(*th, n, 10 * i), Status::kOk);
    CHECK_EQ(end(*th, 10 * i + 5), Status::kOk);
  }
  u->flush();
  const Snapshot every = kept_snapshot(u->freeze(), u->id_salt(), u->sampler(), u->keep(), u->keep_names(), &left_out);
  CHECK_EQ(left_out, uint64_t{0});
  CHECK_EQ(every.timelines.at(0).records.size(), size_t{10});
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// TYPE_SLICE_BEGIN events of the stream's writer (see trace_stream_test.cc).
size_t begins(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i + 3 < s.size(); ++i) {
    if (static_cast<uint8_t>(s[i]) == 0x5A && static_cast<uint8_t>(s[i + 2]) == 0x48 && s[i + 3] == 1) ++n;
  }
  return n;
}

// A stream of a sampling tracer: 100 trees of a root and a child, every 10th
// with a failed child too (kept, 3 spans), the rest left out (2 spans each),
// and a root that never ends with a child (the child waits; close() decides
// it by the head sampler: left out, timed out).
void a_sampling_stream_writes_the_kept_traces_only() {
  auto t = sampling_tracer(keep_word());
  auto main = t->attach_js_thread("main");
  const uint32_t req = t->intern("req"), db = t->intern("db"), fail = t->intern("fail");
  char tmpl[] = "/tmp/hotspan-keep-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  StreamOptions so;
  so.path = dir + "/kept.pftrace";
  so.interval_ms = 5;
  StreamStatus err;
  auto s = TraceStream::start(t, so, nullptr, &err);
  CHECK(s != nullptr);
  int64_t now = 0;
  for (int i = 0; i < 100; ++i) {
    CHECK_EQ(begin(*main, req, now += 10), Status::kOk);
    CHECK_EQ(begin(*main, db, now += 10), Status::kOk);
    CHECK_EQ(end(*main, now += 10), Status::kOk);
    if (i % 10 == 0) {
      CHECK_EQ(begin(*main, fail, now += 10), Status::kOk);
      CHECK_EQ(end(*main, now += 10, kFlagError), Status::kOk);
    }
    CHECK_EQ(end(*main, now += 10), Status::kOk);
  }
  CHECK_EQ(begin(*main, req, now += 10), Status::kOk);
  CHECK_EQ(begin(*main, db, now += 10), Status::kOk);
  CHECK_EQ(end(*main, now += 10), Status::kOk);
  s->close();
  const StreamStatus st = s->status();
  CHECK_EQ(st.error, 0);
  CHECK_EQ(st.written, uint64_t{30});
  CHECK_EQ(st.sampled_out, uint64_t{90 * 2 + 1});
  CHECK_EQ(st.keep_timed_out, uint64_t{1});
  CHECK_EQ(st.waiting, uint64_t{0});
  CHECK_EQ(st.missed, uint64_t{0});
  const std::string bytes = slurp(so.path);
  CHECK_EQ(begins(bytes), size_t{30});
  CHECK(bytes.find("stream_sampled_out") != std::string::npos);
  ::unlink(so.path.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace

int main() {
  kept_traces_are_taken_whole_and_the_others_counted_once();
  two_consumers_count_a_record_left_out_once();
  samples_says_which_tracers_sample();
  kept_snapshot_keeps_the_kept_traces_and_decides_open_roots_by_the_head();
  a_sampling_stream_writes_the_kept_traces_only();
  return check::result("trace_keep_test");
}
