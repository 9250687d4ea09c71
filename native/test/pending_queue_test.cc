// The pending queue (record/pending_queue.h): one item per timeline between
// drains, exact record counts, and the highest written count committed,
// with producers and a drainer on threads of their own.
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "check.h"
#include "record/pending_queue.h"
#include "record/timeline.h"

using namespace hotspan;

namespace {

std::unique_ptr<Timeline> make_timeline(uint32_t id) {
  return std::make_unique<Timeline>(id, TimelineKind::kNative, "t");
}

}  // namespace

static void one_item_per_timeline() {
  PendingQueue q;
  auto a = make_timeline(1);
  auto b = make_timeline(2);
  uint64_t wa = 0, wb = 0;
  for (int i = 0; i < 5; ++i) {
    wa += 256;
    q.push(a.get(), wa, 256);
    if (i < 3) {
      wb += 100;
      q.push(b.get(), wb, 100);
    }
  }
  CHECK_EQ(q.items(), size_t{2});
  CHECK_EQ(q.records(), size_t{5 * 256 + 3 * 100});
  q.drain();
  CHECK_EQ(a->committed(), wa);
  CHECK_EQ(b->committed(), wb);
  CHECK_EQ(q.items(), size_t{0});
  CHECK_EQ(q.records(), size_t{0});
  // After a drain a push makes a new item (the old slot names none).
  q.push(b.get(), wb + 7, 7);
  CHECK_EQ(q.items(), size_t{1});
  CHECK_EQ(q.records(), size_t{7});
  // Written counts out of order (a track's writers): the highest is committed.
  q.push(b.get(), wb + 3, 1);
  CHECK_EQ(q.items(), size_t{1});
  q.drain();
  CHECK_EQ(b->committed(), wb + 7);
  CHECK_EQ(a->committed(), wa);
  CHECK_EQ(q.records(), size_t{0});
}

// Producers push batches of varying sizes for their own timelines while a
// drainer drains: each timeline ends committed exactly at its last written
// count (each timeline's counts lie in a range of their own, so an update
// that reached another timeline's item would show), no record is left
// counted, and the queue never holds more items than there are timelines.
static void producers_and_a_drainer() {
  constexpr int kProducers = 4;
  constexpr int kPushes = 20000;
  constexpr uint64_t kRange = uint64_t{1} << 40;
  PendingQueue q;
  std::vector<std::unique_ptr<Timeline>> tls;
  for (int p = 0; p < kProducers; ++p) tls.push_back(make_timeline(static_cast<uint32_t>(p + 1)));
  std::vector<uint64_t> last(kProducers, 0);
  std::atomic<int> running{kProducers};
  std::atomic<size_t> most_items{0};
  std::thread drainer([&] {
    while (running.load(std::memory_order_acquire) != 0) {
      const size_t n = q.items();
      if (n > most_items.load(std::memory_order_relaxed)) most_items.store(n, std::memory_order_relaxed);
      q.drain();
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      uint64_t written = static_cast<uint64_t>(p) * kRange;
      for (int i = 0; i < kPushes; ++i) {
        const uint32_t records = 1 + static_cast<uint32_t>((i * 7 + p) % 300);
        written += records;
        q.push(tls[p].get(), written, records);
      }
      last[p] = written;
      running.fetch_sub(1, std::memory_order_release);
    });
  }
  for (auto& t : producers) t.join();
  drainer.join();
  CHECK(q.items() <= size_t{kProducers});
  q.drain();
  for (int p = 0; p < kProducers; ++p) CHECK_EQ(tls[p]->committed(), last[p]);
  CHECK_EQ(q.records(), size_t{0});
  CHECK_EQ(q.items(), size_t{0});
  CHECK(most_items.load() <= size_t{kProducers});
}

// Without a drain the queue does not grow with the records: one item per
// timeline however many batches were pushed.
static void bounded_without_a_drain() {
  constexpr int kProducers = 2;
  PendingQueue q;
  std::vector<std::unique_ptr<Timeline>> tls;
  for (int p = 0; p < kProducers; ++p) tls.push_back(make_timeline(static_cast<uint32_t>(p + 1)));
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (uint64_t i = 1; i <= 10000; ++i) q.push(tls[p].get(), i * PendingQueue::kBatch, PendingQueue::kBatch);
    });
  }
  for (auto& t : producers) t.join();
  CHECK_EQ(q.items(), size_t{kProducers});
  CHECK_EQ(q.records(), size_t{kProducers} * 10000 * PendingQueue::kBatch);
  q.drain();
  for (auto& tl : tls) CHECK_EQ(tl->committed(), uint64_t{10000} * PendingQueue::kBatch);
  CHECK_EQ(q.records(), size_t{0});
}

int main() {
  RUN_TEST(one_item_per_timeline);
  RUN_TEST(producers_and_a_drainer);
  RUN_TEST(bounded_without_a_drain);
  return check::result("pending_queue_test");
}
