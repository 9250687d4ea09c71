// Huge-page arrays: snapshots large enough to get huge pages leave no
// MADV_HUGEPAGE flag on malloc's heap once freed (malloc serves a large block
// from its heap after it freed one of that size, so advising malloc memory
// would mark the heap for the host's later small allocations), and the
// allocator's arrays hold what was written.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "check.h"
#include "record/huge_pages.h"
#include "test_util.h"
#include "record/tracer.h"

namespace {

using namespace hotspan;

// Mappings whose VmFlags carry "hg" (MADV_HUGEPAGE), by their smaps header.
std::vector<std::string> advised_mappings() {
  std::vector<std::string> out;
  std::ifstream smaps("/proc/self/smaps");
  std::string line, header;
  while (std::getline(smaps, line)) {
    if (!line.empty() && line.find(':') > line.find(' ')) header = line;  // "start-end perms ..."
    if (line.rfind("VmFlags:", 0) == 0 && (line + " ").find(" hg ") != std::string::npos) {
      out.push_back(header);
    }
  }
  return out;
}

void snapshots_leave_no_advice_behind() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("n");
  auto st = t->attach_js_thread("main");
  // 300k records: 9.6 MB of SpanRecord, over huge_pages::kMinBytes.
  for (int64_t i = 0; i < 300000; ++i) {
    CHECK_EQ(begin(*st, n, i * 10), Status::kOk);
    CHECK_EQ(end(*st, i * 10 + 5), Status::kOk);
  }
  static_assert(300000 * sizeof(SpanRecord) > huge_pages::kMinBytes, "large enough to advise");
  // Several rounds of the same size: after the first free, malloc would
  // serve the next one from its heap.
  for (int round = 0; round < 4; ++round) {
    const Snapshot s = test_util::materialize(t->freeze());
    const auto* tl = test_util::find_timeline(s, timeline_id(*st));
    CHECK(tl && tl->records.size() == 300000);
    if (tl && tl->records.size() == 300000) CHECK_EQ(tl->records[299999].end_ns, 2999995);
  }
  const std::vector<std::string> left = advised_mappings();
  for (const std::string& m : left) std::printf("   still advised: %s\n", m.c_str());
  CHECK(left.empty());
}

void allocator_round_trip() {
  for (size_t bytes : {size_t{4096}, huge_pages::kMinBytes, huge_pages::kMinBytes * 3 + 12345}) {
    std::vector<uint64_t, HugePageAllocator<uint64_t>> v(bytes / sizeof(uint64_t));
    for (size_t i = 0; i < v.size(); ++i) v[i] = i * 2654435761u;
    bool same = true;
    for (size_t i = 0; i < v.size(); ++i) same &= v[i] == i * 2654435761u;
    CHECK(same);
  }
  CHECK(advised_mappings().empty());  // every mapping is gone with its array
}

}  // namespace

int main() {
  RUN_TEST(snapshots_leave_no_advice_behind);
  RUN_TEST(allocator_round_trip);
  return check::result("huge_pages_test");
}
