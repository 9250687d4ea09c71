// AttrArea: entries kept in place across blocks, read back exactly, dropped
// in record order, whole blocks given back (the byte counts the timeline
// charges and uncharges).
#include <algorithm>
#include <string>
#include <vector>

#include "record/attr_area.h"
#include "check.h"

using namespace hotspan;

namespace {

std::vector<std::string> read_range(const AttrArea& a, uint64_t begin, uint64_t end,
                                    std::vector<uint64_t>* idx = nullptr) {
  std::vector<std::string> out;
  a.each_between(begin, end, [&](const AttrArea::Entry& e) {
    out.emplace_back(e.bytes);
    if (idx != nullptr) idx->push_back(e.index);
  });
  return out;
}

std::vector<std::string> read_all(const AttrArea& a, uint64_t end, std::vector<uint64_t>* idx = nullptr) {
  return read_range(a, 0, end, idx);
}

// Stores entry `i` as the timeline does: a block when need() asks for one.
size_t put(AttrArea& a, uint64_t i, const std::string& s) {
  const size_t block = a.need(i, s.size());
  if (block != 0) a.add_block(block);
  a.append(i, static_cast<uint32_t>(i + 1), s.data(), s.size());
  return block;
}

}  // namespace

static void spans_blocks_and_reads_back_exactly() {
  AttrArea a;
  CHECK_EQ(a.need(0, 10), AttrArea::kBlockBytes);
  std::vector<std::string> want;
  size_t charged = 0;
  for (uint64_t i = 0; i < 3000; ++i) {
    want.push_back(std::string(i % 97, static_cast<char>('a' + i % 26)) + std::to_string(i));
    charged += put(a, i, want.back());
  }
  CHECK(charged > AttrArea::kBlockBytes);  // several blocks
  CHECK_EQ(a.held(), charged);
  CHECK(read_all(a, 3000) == want);
  // Only entries below `end`, in order.
  std::vector<uint64_t> idx;
  CHECK_EQ(read_all(a, 10, &idx).size(), size_t{10});
  CHECK_EQ(idx.back(), uint64_t{9});
  // A range that begins blocks in (a consumer's batch): exactly its entries.
  for (const uint64_t begin : {uint64_t{1}, uint64_t{700}, uint64_t{2999}}) {
    idx.clear();
    const std::vector<std::string> got = read_range(a, begin, begin + 250, &idx);
    CHECK(got == std::vector<std::string>(want.begin() + static_cast<long>(begin),
                                          want.begin() + static_cast<long>(std::min<uint64_t>(begin + 250, 3000))));
    CHECK_EQ(idx.front(), begin);
  }
}

static void an_entry_larger_than_a_block_gets_its_own() {
  AttrArea a;
  put(a, 0, "small");
  const std::string big(AttrArea::kBlockBytes * 3, 'x');
  CHECK_EQ(a.need(1, big.size()), AttrArea::kHeader + big.size());
  put(a, 1, big);
  put(a, 2, "after");
  const std::vector<std::string> got = read_all(a, 3);
  CHECK_EQ(got.size(), size_t{3});
  CHECK(got[1] == big);
  CHECK(got[2] == "after");
}

// An entry's index is kept as its distance from its block's first: one
// farther than a u32 opens a new block, and every index reads back exactly.
static void an_index_far_from_its_block_opens_a_new_one() {
  AttrArea a;
  const uint64_t far = uint64_t{1} << 32;
  CHECK_EQ(put(a, 7, "first"), AttrArea::kBlockBytes);
  CHECK_EQ(put(a, 7 + far - 1, "last in reach"), size_t{0});
  CHECK_EQ(put(a, 7 + far, "out of reach"), AttrArea::kBlockBytes);
  CHECK_EQ(put(a, 7 + 3 * far, "farther"), AttrArea::kBlockBytes);
  CHECK_EQ(put(a, 7 + 3 * far + 1, "next"), size_t{0});
  std::vector<uint64_t> idx;
  const std::vector<std::string> got = read_all(a, UINT64_MAX, &idx);
  CHECK(got == (std::vector<std::string>{"first", "last in reach", "out of reach", "farther", "next"}));
  CHECK(idx == (std::vector<uint64_t>{7, 7 + far - 1, 7 + far, 7 + 3 * far, 7 + 3 * far + 1}));
  CHECK(read_range(a, 7 + far, 7 + 3 * far + 1) == (std::vector<std::string>{"out of reach", "farther"}));
  CHECK_EQ(a.drop_below(7 + far), AttrArea::kBlockBytes);
  CHECK_EQ(read_all(a, UINT64_MAX).size(), size_t{3});
}

static void dropping_gives_whole_blocks_back() {
  AttrArea a;
  size_t charged = 0;
  const std::string s(1000, 'y');
  for (uint64_t i = 0; i < 100; ++i) charged += put(a, i, s);
  const size_t per_block = AttrArea::kBlockBytes / (AttrArea::kHeader + s.size());
  // Dropping fewer entries than a block holds gives nothing back.
  CHECK_EQ(a.drop_below(per_block - 1), size_t{0});
  CHECK_EQ(read_all(a, 100).size(), size_t{100 - (per_block - 1)});
  // Past the first block: exactly it.
  CHECK_EQ(a.drop_below(per_block), AttrArea::kBlockBytes);
  size_t freed = AttrArea::kBlockBytes;
  CHECK_EQ(read_all(a, 100).size(), size_t{100 - per_block});
  // Everything: all blocks but the last (kept for reuse) come back.
  freed += a.drop_below(100);
  CHECK(read_all(a, 1000).empty());
  CHECK_EQ(a.held(), AttrArea::kBlockBytes);
  CHECK_EQ(freed + a.held(), charged);
  // The kept block takes new entries without a new charge.
  CHECK_EQ(put(a, 100, "again"), size_t{0});
  CHECK(read_all(a, 101) == std::vector<std::string>{"again"});
}

int main() {
  RUN_TEST(spans_blocks_and_reads_back_exactly);
  RUN_TEST(an_entry_larger_than_a_block_gets_its_own);
  RUN_TEST(an_index_far_from_its_block_opens_a_new_one);
  RUN_TEST(dropping_gives_whole_blocks_back);
  return check::result("attr_area_test");
}
