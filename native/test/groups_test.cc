// Span groups: nesting, errors, attributes, finalization off a holder.
#include <thread>

#include "check.h"
#include "test_util.h"
#include "record/tracer.h"

using namespace hotspan;
using test_util::find_local;

static const FrozenTimeline* groups_timeline(const FrozenSnapshot& s) {
  for (const auto& tl : s.timelines) {
    if (tl.kind == TimelineKind::kGroups) return &tl;
  }
  return nullptr;
}

static void nesting() {
  auto t = Tracer::create();
  const uint32_t step = t->intern("global_step"), fwd = t->intern("forward"),
                 bwd = t->intern("backward");
  auto main = t->attach_js_thread("main");
  CHECK(groups_timeline(t->freeze()) == nullptr);  // made on first use
  CHECK_EQ(t->open_groups(), size_t{0});
  CHECK_EQ(t->group_begin(step, 10, R"({"step":1})"), Status::kOk);
  CHECK_EQ(t->group_begin(fwd, 11), Status::kOk);
  CHECK_EQ(t->open_groups(), size_t{2});
  CHECK_EQ(t->group_end(20), Status::kOk);
  CHECK_EQ(t->group_begin(bwd, 21), Status::kOk);
  CHECK_EQ(t->group_end(30), Status::kOk);
  CHECK_EQ(t->group_end(31), Status::kOk);
  CHECK_EQ(t->open_groups(), size_t{0});

  const FrozenSnapshot s = t->freeze();
  const auto* g = groups_timeline(s);
  CHECK(g != nullptr);
  if (!g) return;
  CHECK_EQ(g->name, std::string("groups"));
  CHECK_EQ(g->records.size(), size_t{3});
  const auto r1 = find_local(*g, 1);
  const auto r2 = find_local(*g, 2);
  const auto r3 = find_local(*g, 3);
  CHECK(r1 && r2 && r3);
  if (!(r1 && r2 && r3)) return;
  CHECK_EQ(r1->name, step);
  CHECK_EQ(r1->depth, 0);
  CHECK_EQ(r1->parent_local, 0u);
  CHECK_EQ(r1->start_ns, 10);
  CHECK_EQ(r1->end_ns, 31);
  CHECK((r1->flags & kFlagAttrs) != 0);
  CHECK_EQ(r2->name, fwd);
  CHECK_EQ(r2->depth, 1);
  CHECK_EQ(r2->parent_local, 1u);
  CHECK_EQ(r3->name, bwd);
  CHECK_EQ(r3->parent_local, 1u);
  const std::string* a = test_util::attrs_of(*g, 1);
  CHECK(a && *a == R"({"step":1})");
  (void)main;
}

static void errors() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("g");
  auto main = t->attach_js_thread("main");
  CHECK_EQ(t->group_end(1), Status::kNoOpenSpan);  // none ever opened
  CHECK_EQ(t->group_begin(n + 1, 1), Status::kInvalid);
  CHECK_EQ(t->group_begin(n, 2), Status::kOk);
  CHECK_EQ(t->group_end(3), Status::kOk);
  CHECK_EQ(t->group_end(4), Status::kNoOpenSpan);  // none open
  const FrozenSnapshot s = t->freeze();
  const auto* g = groups_timeline(s);
  CHECK(g && g->records.size() == 1);  // nothing lost by the bad end
  (void)main;
}

static void off_holder_waits_for_flush() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("request");
  std::thread([&] {
    CHECK_EQ(t->group_begin(n, 1), Status::kOk);
    CHECK_EQ(t->group_end(2), Status::kOk);
  }).join();
  const FrozenSnapshot before = t->freeze();
  const auto* g = groups_timeline(before);
  CHECK(g && g->records.empty());
  t->flush();
  const FrozenSnapshot s = t->freeze();
  g = groups_timeline(s);
  CHECK(g && g->records.size() == 1);
}

int main() {
  RUN_TEST(nesting);
  RUN_TEST(errors);
  RUN_TEST(off_holder_waits_for_flush);
  return check::result("groups_test");
}
