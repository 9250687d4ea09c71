// native/include/hotspan.hpp through a core tracer's table (c_api_for), as
// an addon would use it: a call site first used by many threads at once,
// scopes racing attach() of another table, an AsyncScope moved to another
// thread, and a closed tracer. Runs under Release and ThreadSanitizer, where
// a race in the header's binding or name cache is a report.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "check.h"
#include "hotspan.hpp"
#include "record/c_api.h"
#include "record/clock.h"
#include "record/span_record.h"
#include "record/tracer.h"

namespace {

using hotspan::FrozenSnapshot;
using hotspan::TimelineKind;
using hotspan::Tracer;

constexpr int kThreads = 8;

std::shared_ptr<Tracer> make_tracer() {
  hotspan::TracerOptions o;
  o.origin_ns = hotspan::clock::now_ns();
  return Tracer::create(o);
}

// Records per name id over the tracer's native timelines, and on tracks.
struct Seen {
  uint64_t native = 0, track = 0, wrong_name = 0;
};
Seen seen(const std::shared_ptr<Tracer>& tracer, const std::string& name) {
  tracer->flush();
  const FrozenSnapshot snap = tracer->freeze();
  const uint32_t id = tracer->intern(name);
  Seen s;
  for (const auto& t : snap.timelines) {
    for (const auto& r : t.records) {
      if (r.name != id) ++s.wrong_name;
      (t.kind == TimelineKind::kTrack ? s.track : s.native) += 1;
    }
  }
  return s;
}

// Threads start together on a flag, then run `body`.
template <class Body>
void gated(int threads, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      body(i);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  go.store(true);
  for (auto& t : pool) t.join();
}

void test_first_use_from_many_threads() {
  for (int round = 0; round < 20; ++round) {
    auto tracer = make_tracer();
    CHECK(hotspan::attach(hotspan::c_api_for(tracer)) == hotspan::Attach::kOk);
    gated(kThreads, [](int) {
      HOTSPAN_SCOPE("first.use");
    });
    const Seen s = seen(tracer, "first.use");
    CHECK_EQ(s.native, uint64_t{kThreads});
    CHECK_EQ(s.wrong_name, uint64_t{0});
  }
  hotspan::detach();
}

void test_scopes_racing_attach() {
  auto a = make_tracer();
  auto b = make_tracer();
  // Other names first in b, so the site's id differs between the tables.
  for (int i = 0; i < 5; ++i) b->intern("pad." + std::to_string(i));
  const hotspan_api_v1* ta = hotspan::c_api_for(a);
  const hotspan_api_v1* tb = hotspan::c_api_for(b);
  CHECK(hotspan::attach(ta) == hotspan::Attach::kOk);
  static const hotspan::Name kSite("race.site");
  std::atomic<uint64_t> recorded{0};
  std::atomic<bool> stop{false};
  std::thread switcher([&] {
    for (int i = 0; !stop.load(); ++i) {
      CHECK(hotspan::attach(i % 2 ? ta : tb) == hotspan::Attach::kOk);
      std::this_thread::yield();
    }
  });
  gated(kThreads, [&](int) {
    uint64_t mine = 0;
    for (int i = 0; i < 2000; ++i) {
      hotspan::Scope s(kSite);
      mine += s.recording();
    }
    recorded.fetch_add(mine);
  });
  stop.store(true);
  switcher.join();
  const Seen sa = seen(a, "race.site");
  const Seen sb = seen(b, "race.site");
  CHECK_EQ(recorded.load(), uint64_t{kThreads} * 2000);
  CHECK_EQ(sa.native + sb.native, recorded.load());
  CHECK_EQ(sa.wrong_name + sb.wrong_name, uint64_t{0});
  hotspan::detach();
}

void test_async_scope_moved_to_another_thread() {
  auto tracer = make_tracer();
  CHECK(hotspan::attach(hotspan::c_api_for(tracer)) == hotspan::Attach::kOk);
  std::vector<hotspan::AsyncScope> open;
  std::thread producer([&] {
    for (int i = 0; i < 100; ++i) open.push_back(HOTSPAN_ASYNC("jobs", "job"));
  });
  producer.join();
  CHECK_EQ(seen(tracer, "job").track, uint64_t{0});  // none ended yet
  std::thread finisher([&] {
    for (auto& job : open) CHECK(job.recording());
    std::vector<hotspan::AsyncScope> moved = std::move(open);
    for (auto& job : moved) CHECK_EQ(job.end(), HOTSPAN_OK);
    for (auto& job : moved) CHECK_EQ(job.end(), HOTSPAN_INVALID);  // once only
  });
  finisher.join();
  const Seen s = seen(tracer, "job");
  CHECK_EQ(s.track, uint64_t{100});
  CHECK_EQ(s.wrong_name, uint64_t{0});
  hotspan::detach();
}

void test_closed_and_detached() {
  auto tracer = make_tracer();
  CHECK(hotspan::attach(hotspan::c_api_for(tracer)) == hotspan::Attach::kOk);
  static const hotspan::Name kName("closed.site");
  {
    hotspan::Scope s(kName);
    CHECK(s.recording());
  }
  tracer->close();
  gated(kThreads, [](int) {
    for (int i = 0; i < 100; ++i) {
      hotspan::Scope s(kName);
      CHECK(!s.recording());
      HOTSPAN_SCOPE("closed.other");
      auto job = HOTSPAN_ASYNC("closed.track", "closed.job");
      CHECK(!job.recording());
    }
    CHECK_EQ(hotspan::set_thread_name("late"), HOTSPAN_CLOSED);
  });
  hotspan::detach();
  {
    hotspan::Scope s(kName);
    CHECK(!s.recording());
  }
  CHECK(hotspan::attached() == nullptr);
  hotspan_api_v1 bogus{};
  bogus.abi_version = HOTSPAN_ABI_VERSION + 1;
  bogus.struct_size = sizeof bogus;
  CHECK(hotspan::attach(&bogus) == hotspan::Attach::kAbiVersion);
  bogus.abi_version = HOTSPAN_ABI_VERSION;
  bogus.struct_size = 8;
  CHECK(hotspan::attach(&bogus) == hotspan::Attach::kTableSize);
  CHECK(hotspan::attach(nullptr) == hotspan::Attach::kNullTable);
  CHECK(hotspan::attached() == nullptr);
}

}  // namespace

int main() {
  RUN_TEST(test_first_use_from_many_threads);
  RUN_TEST(test_scopes_racing_attach);
  RUN_TEST(test_async_scope_moved_to_another_thread);
  RUN_TEST(test_closed_and_detached);
  return check_report("hpp_test");
}
