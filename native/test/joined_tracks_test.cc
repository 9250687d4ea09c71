// A joined thread's async tracks and groups (read/handover_batch.h): the
// thread's own instance records them under the shared tracer's ids (a
// track's tracer-wide timeline id, each async span's local id given out by
// the shared tracer), hands them over with its thread's records, and the
// owner's instance stores each track's records on its track of that name
// under the same id (made there if it had none), so both derive the same
// span ids; the groups land on the owner's groups timeline, renumbered.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "read/handover_batch.h"
#include "record/group_track.h"
#include "record/imported_thread.h"
#include "record/registry.h"
#include "record/span_ids.h"
#include "record/span_record.h"
#include "record/thread_state.h"
#include "record/trace_id.h"
#include "record/tracer.h"
#include "test_util.h"

using namespace hotspan;
using test_util::find_timeline;
using test_util::salted;

namespace {

constexpr uint64_t kSalt = 0x5eed0000feedbeefull;
constexpr uint32_t kThread = kFirstJoinedTimeline + 1;
constexpr uint32_t kGroups = kFirstJoinedTimeline + 2;
constexpr uint32_t kNewTrack = kFirstJoinedTimeline + 3;
constexpr uint32_t kLocal = (1u << 31) + 5;

// The worker's instance: an async span on the owner's track `gpu_id`, one on
// a track only it has (kNewTrack), and a group with a group inside.
std::string worker_batch(uint32_t gpu_id, uint64_t* token) {
  auto w = salted(kSalt);
  const uint32_t kernel = w->intern("kernel");
  const uint32_t copy = w->intern("copy");
  const uint32_t outer = w->intern("outer");
  const uint32_t inner = w->intern("inner");
  auto st = w->attach_js_thread("worker", kThread);
  CHECK(st != nullptr);
  CHECK_EQ(w->group_track(true, kGroups)->timeline().id(), kGroups);
  // Named without saying serial (concurrent here): stored on the owner's serial track.
  CHECK_EQ(w->track("gpu", false, false, gpu_id), gpu_id);
  CHECK_EQ(w->track("dma", false, false, kNewTrack), kNewTrack);
  CHECK_EQ(w->set_next_async_local(gpu_id, kLocal), Status::kOk);
  *token = w->async_begin(gpu_id, kernel, 100, "{\"n\":1}");
  CHECK_EQ(*token, make_span_id(gpu_id, kLocal));
  CHECK_EQ(w->set_next_async_local(kNewTrack, kLocal + 1), Status::kOk);
  const uint64_t dma = w->async_begin(kNewTrack, copy, 110);
  CHECK_EQ(dma, make_span_id(kNewTrack, kLocal + 1));
  CHECK_EQ(w->group_begin(outer, 120), Status::kOk);
  CHECK_EQ(w->group_begin(inner, 130), Status::kOk);
  CHECK_EQ(w->group_end(140), Status::kOk);
  CHECK_EQ(w->group_end(150), Status::kOk);
  CHECK_EQ(w->async_end(*token, 160), Status::kOk);
  CHECK_EQ(w->async_end(dma, 170), Status::kOk);
  w->flush();
  auto source = HandoverSource::open(w);
  CHECK(source != nullptr);
  std::string out;
  CHECK_EQ(source->take(out), 4u);  // 2 async spans, 2 groups
  return out;
}

const FrozenTimeline* by_name(const FrozenSnapshot& s, const std::string& name) {
  for (const FrozenTimeline& tl : s.timelines) {
    if (tl.name == name) return &tl;
  }
  return nullptr;
}

// Imports `batch` into `owner` as the worker's thread; the records stored.
uint64_t import_worker(Tracer& owner, const std::string& batch) {
  auto imported = owner.import_thread("worker", kThread);
  CHECK(imported != nullptr);
  if (imported == nullptr) return 0;
  uint64_t stored = 0;
  CHECK_EQ(import_batch(*imported, reinterpret_cast<const uint8_t*>(batch.data()), batch.size(), &stored),
           Status::kOk);
  return stored;
}

}  // namespace

static void tracks_and_groups_arrive_under_the_same_ids() {
  auto owner = salted(kSalt);
  owner->attach_js_thread("main");
  owner->track("other", false);
  const uint32_t gpu = owner->track("gpu", true);
  CHECK_EQ(gpu, 3u);
  // The owner's own span on the same track: its core numbers it from 1.
  const uint32_t mine = owner->intern("mine");
  const uint64_t own = owner->async_begin(gpu, mine, 10);
  CHECK_EQ(owner->async_end(own, 20), Status::kOk);
  CHECK_EQ(owner->group_begin(mine, 5), Status::kOk);  // its own group takes local 1 there

  uint64_t token = 0;
  CHECK_EQ(import_worker(*owner, worker_batch(gpu, &token)), 4u);
  CHECK_EQ(owner->group_end(200), Status::kOk);
  owner->flush();

  const FrozenSnapshot s = owner->freeze();
  std::vector<std::vector<SpanIds>> ids;
  resolve_span_ids(s, kSalt, ids);
  const FrozenTimeline* g = find_timeline(s, gpu);
  CHECK(g != nullptr && g->name == "track: gpu" && g->records.size() == 2);
  if (g == nullptr || g->records.size() != 2) return;
  const size_t gi = static_cast<size_t>(g - s.timelines.data());
  const SpanRecord theirs = g->records[1];
  CHECK_EQ(s.names[theirs.name], std::string("kernel"));
  CHECK_EQ(theirs.local_id, kLocal);
  CHECK_EQ(theirs.start_ns, 100);
  CHECK_EQ(theirs.end_ns, 160);
  CHECK((theirs.flags & kFlagAsync) != 0);
  CHECK((theirs.flags & kFlagAttrs) != 0);
  CHECK_EQ(ids[gi][1].span, trace_id::wire_span_id(kSalt, token));
  CHECK(ids[gi][0].span != ids[gi][1].span);

  const FrozenTimeline* dma = find_timeline(s, kNewTrack);
  CHECK(dma != nullptr && dma->name == "track: dma" && dma->records.size() == 1);
  if (dma != nullptr && dma->records.size() == 1) CHECK_EQ(dma->records[0].local_id, kLocal + 1);
  CHECK_EQ(owner->track("dma", false), kNewTrack);  // found again by name

  // Groups: on the owner's one groups timeline, renumbered after its own.
  const FrozenTimeline* groups = by_name(s, "groups");
  CHECK(groups != nullptr && groups->records.size() == 3);
  if (groups == nullptr || groups->records.size() != 3) return;
  const SpanRecord inner = groups->records[0];
  const SpanRecord outer = groups->records[1];
  CHECK_EQ(s.names[inner.name], std::string("inner"));
  CHECK_EQ(s.names[outer.name], std::string("outer"));
  CHECK_EQ(inner.parent_local, outer.local_id);
  CHECK_EQ(inner.depth, 1);
  CHECK(outer.local_id != 1u && inner.local_id != 1u && outer.local_id != inner.local_id);
  CHECK_EQ(s.names[groups->records[2].name], std::string("mine"));
  CHECK_EQ(groups->records[2].local_id, 1u);
  // Nothing counted lost on the worker's thread.
  const FrozenTimeline* th = find_timeline(s, kThread);
  CHECK(th != nullptr && th->counts.dropped == 0);
}

// Negative control: the owner's track of that name has another id (not the
// shared tracer's): its span is counted dropped on the thread, never stored
// on a track whose span ids it would not match.
static void a_track_under_another_id_is_counted_dropped() {
  auto owner = salted(kSalt);
  owner->attach_js_thread("main");
  const uint32_t gpu = owner->track("gpu", true);
  uint64_t token = 0;
  import_worker(*owner, worker_batch(gpu + 7, &token));
  owner->flush();
  const FrozenSnapshot s = owner->freeze();
  const FrozenTimeline* g = find_timeline(s, gpu);
  CHECK(g != nullptr && g->records.size() == 0);
  CHECK(find_timeline(s, gpu + 7) == nullptr);
  const FrozenTimeline* th = find_timeline(s, kThread);
  CHECK(th != nullptr && th->counts.dropped == 1);
}

// A joined instance's own ids skip the ids it gave tracks explicitly.
static void own_ids_skip_explicit_track_ids() {
  auto w = salted(kSalt);
  CHECK_EQ(w->track("a", false, false, 1), 1u);
  CHECK_EQ(w->track("a", false, false, 2), 0u);  // that name has another id
  CHECK_EQ(w->track("b", false, false, 1), 0u);  // taken
  CHECK_EQ(w->track("c", false), 2u);
}

// What a worker posts for a batch back-pressure refused: the names and the
// lost count, no section and no record (strip_records), and the owner stores
// the names from it and no record.
static void a_refused_batch_carries_its_names_and_no_record() {
  uint64_t token = 0;
  const std::string full = worker_batch(1, &token);
  std::string cut = full;
  CHECK_EQ(strip_records(cut), Status::kOk);
  // The header (24 bytes), the 4 names (u32 size and bytes each), 0 sections.
  const size_t names = (4 + 6) + (4 + 4) + (4 + 5) + (4 + 5);
  CHECK_EQ(cut.size(), 24 + names + 4);
  CHECK(cut.size() < full.size());
  CHECK_EQ(cut.compare(0, 12, full, 0, 12), 0);     // version, first name, names
  CHECK_EQ(cut.compare(16, 8 + names, full, 16, 8 + names), 0);  // lost, the names
  uint32_t records = 1, sections = 1;
  std::memcpy(&records, cut.data() + 12, sizeof records);
  std::memcpy(&sections, cut.data() + 24 + names, sizeof sections);
  CHECK_EQ(records, 0u);
  CHECK_EQ(sections, 0u);

  auto owner = salted(kSalt);
  owner->attach_js_thread("main");
  auto imported = owner->import_thread("worker", kThread);
  CHECK(imported != nullptr);
  if (imported == nullptr) return;
  uint64_t stored = 7;
  CHECK_EQ(import_batch(*imported, reinterpret_cast<const uint8_t*>(cut.data()), cut.size(), &stored),
           Status::kOk);
  CHECK_EQ(stored, 0u);
  const std::vector<std::string> known = owner->names();
  CHECK(std::find(known.begin(), known.end(), "kernel") != known.end());

  std::string junk = "HSB2 but not a batch";
  CHECK_EQ(strip_records(junk), Status::kInvalid);
  CHECK_EQ(junk, std::string("HSB2 but not a batch"));
}

int main() {
  RUN_TEST(tracks_and_groups_arrive_under_the_same_ids);
  RUN_TEST(a_refused_batch_carries_its_names_and_no_record);
  RUN_TEST(a_track_under_another_id_is_counted_dropped);
  RUN_TEST(own_ids_skip_explicit_track_ids);
  return check::result("joined_tracks_test");
}
