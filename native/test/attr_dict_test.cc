// AttrDict and the compact stored form: ids deduplicated across adds,
// bounded (kNone past a bound or when the budget refuses, so the writer
// stores the full form), charged to and given back to the pool; the compact
// form renders exactly through the dictionary and is kept as is when it does
// not parse; readers below the published count race no writer (TSan).
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "record/attr_dict.h"
#include "record/attr_slots.h"
#include "check.h"
#include "record/chunk_pool.h"

using namespace hotspan;
namespace as = hotspan::attr_slots;

namespace {

std::shared_ptr<ChunkPool> big_pool() { return std::make_shared<ChunkPool>(ChunkPool::kMaxLimit, FullPolicy::kDrop); }

std::string value_text(uint32_t i) { return "value " + std::to_string(i); }

// The compact form as the addon writes it (attr_values.cc CompactSlots).
struct Compact {
  std::string bytes;
  uint32_t kinds = 0;
  uint32_t slot = 0;
  explicit Compact(uint16_t shape) {
    bytes.push_back(as::kCompactTag);
    bytes.append(reinterpret_cast<const char*>(&shape), 2);
    bytes.push_back(0);
  }
  void kind(as::CompactKind k) { kinds |= static_cast<uint32_t>(k) << (as::kCompactKindBits * slot++); }
  Compact& number(double d) {
    kind(as::kCompactNumber);
    bytes.append(reinterpret_cast<const char*>(&d), 8);
    return *this;
  }
  Compact& value(uint32_t id) {
    kind(as::kCompactValue);
    bytes.append(reinterpret_cast<const char*>(&id), 4);
    return *this;
  }
  Compact& text(const std::string& s) {
    kind(as::kCompactText);
    const auto n = static_cast<uint32_t>(s.size());
    bytes.append(reinterpret_cast<const char*>(&n), 4);
    bytes += s;
    return *this;
  }
  Compact& boolean(bool b) {
    kind(as::kCompactBool);
    bytes.push_back(b ? 1 : 0);
    return *this;
  }
  std::string done() {
    bytes[3] = static_cast<char>(kinds);
    return bytes;
  }
};

}  // namespace

static void ids_are_deduplicated_and_bounded() {
  auto pool = big_pool();
  AttrDict d(pool);
  const std::string_view ab[] = {"a", "b"};
  const std::string_view ba[] = {"b", "a"};
  const std::string_view a_b[] = {std::string_view("a\0\0\0\0b", 6), "x"};  // a key that looks like a length prefix
  CHECK_EQ(d.add_shape(ab, 2), 0u);
  CHECK_EQ(d.add_shape(ba, 2), 1u);
  CHECK_EQ(d.add_shape(ab, 2), 0u);
  CHECK_EQ(d.add_shape(ab, 1), 2u);  // keys ["a"]
  CHECK_EQ(d.add_shape(a_b, 2), 3u);
  CHECK_EQ(d.add_shape(ab, 0), AttrDict::kNone);
  CHECK_EQ(d.shapes(), 4u);
  CHECK_EQ(d.shape(1).slots, 2u);
  CHECK_EQ(d.shape(1).keys[0], std::string("b"));
  CHECK_EQ(d.add_value("GET"), 0u);
  CHECK_EQ(d.add_value("POST"), 1u);
  CHECK_EQ(d.add_value("GET"), 0u);
  CHECK_EQ(d.values(), 2u);
  CHECK_EQ(d.value(1), std::string_view("POST"));

  // The shape count bound: past it, new shapes are refused, known ones still found.
  for (uint32_t i = d.shapes(); i < AttrDict::kMaxShapes; ++i) {
    const std::string k = "k" + std::to_string(i);
    const std::string_view keys[] = {k};
    CHECK_EQ(d.add_shape(keys, 1), i);
  }
  const std::string_view fresh[] = {"fresh"};
  CHECK_EQ(d.add_shape(fresh, 1), AttrDict::kNone);
  CHECK_EQ(d.add_shape(ba, 2), 1u);
  CHECK_EQ(d.shapes(), AttrDict::kMaxShapes);

  // The byte bound: values of 1000 bytes until refused, well before kMaxValues.
  uint32_t added = 0;
  for (uint32_t i = 0;; ++i) {
    const std::string v = std::to_string(i) + std::string(1000, 'v');
    if (d.add_value(v) == AttrDict::kNone) break;
    ++added;
  }
  CHECK(added > 100);
  CHECK(added * 1000 < AttrDict::kMaxBytes);
  CHECK_EQ(d.add_value("GET"), 0u);  // known values still found
}

static void charged_to_the_pool_and_given_back() {
  auto pool = big_pool();
  const size_t before = pool->used();
  {
    AttrDict d(pool);
    const std::string_view keys[] = {"route", "bytes"};
    d.add_shape(keys, 2);
    d.add_value("/users/:id");
    CHECK(d.charged() > 0);
    CHECK_EQ(pool->used() - before, d.charged());
  }
  CHECK_EQ(pool->used(), before);

  // A budget that has no room refuses: kNone, nothing charged.
  auto tiny = std::make_shared<ChunkPool>(64, FullPolicy::kDrop);
  AttrDict d(tiny);
  CHECK_EQ(d.add_value(std::string(200, 'x')), AttrDict::kNone);
  const std::string_view keys[] = {std::string_view("k")};
  CHECK_EQ(d.add_shape(keys, 1), AttrDict::kNone);
  CHECK_EQ(tiny->used(), 0u);
  CHECK_EQ(d.charged(), 0u);
}

static void compact_form_renders_exactly() {
  AttrDict d(big_pool());
  const std::string_view keys[] = {"route", "bytes", "ok", "raw \"q\""};
  const uint32_t shape = d.add_shape(keys, 4);
  const uint32_t route = d.add_value("/a\u00e9");
  const std::string s = Compact(static_cast<uint16_t>(shape)).value(route).number(-1.25e-300).boolean(true).text("x\ny").done();
  CHECK_EQ(s.size(), as::kCompactHead + 4 + 8 + 1 + 4 + 3);
  CHECK(as::is_slots(s));
  CHECK_EQ(as::as_json(s, &d),
           std::string("{\"route\":\"/a\u00e9\",\"bytes\":-1.25e-300,\"ok\":true,\"raw \\\"q\\\"\":\"x\\u000ay\"}"));
  const std::string_view one[] = {"n"};
  const uint32_t s1 = d.add_shape(one, 1);
  CHECK_EQ(as::as_json(Compact(static_cast<uint16_t>(s1)).number(2e21).done(), &d), std::string("{\"n\":2e+21}"));
  CHECK_EQ(as::as_json(Compact(static_cast<uint16_t>(s1)).boolean(false).done(), &d), std::string("{\"n\":false}"));

  // What does not parse is kept as is: no dictionary, an unknown shape or
  // value id, cut short, bytes left over, a number that is not finite.
  CHECK_EQ(as::as_json(s, nullptr), s);
  const std::string unknown_shape = Compact(999).number(1).done();
  CHECK_EQ(as::as_json(unknown_shape, &d), unknown_shape);
  const std::string unknown_value = Compact(static_cast<uint16_t>(s1)).value(77).done();
  CHECK_EQ(as::as_json(unknown_value, &d), unknown_value);
  const std::string cut = s.substr(0, s.size() - 1);
  CHECK_EQ(as::as_json(cut, &d), cut);
  const std::string extra = Compact(static_cast<uint16_t>(s1)).number(1).done() + "z";
  CHECK_EQ(as::as_json(extra, &d), extra);
  const std::string nan = Compact(static_cast<uint16_t>(s1)).number(std::nan("")).done();
  CHECK_EQ(as::as_json(nan, &d), nan);
  CHECK_EQ(as::as_json(std::string(1, as::kCompactTag), &d), std::string(1, as::kCompactTag));
}

// Writers add while readers read every id below the count they see: each
// entry must be whole (TSan: no race between an add and a read below it).
static void readers_race_no_writer() {
  AttrDict d(big_pool());
  constexpr uint32_t kValues = 3000;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        const uint32_t n = d.values();
        for (uint32_t i = 0; i < n; ++i) {
          if (d.value(i) != value_text(i)) bad.fetch_add(1);
        }
        const uint32_t m = d.shapes();
        for (uint32_t i = 0; i < m; ++i) {
          if (d.shape(i).keys[0] != value_text(i)) bad.fetch_add(1);
        }
      }
    });
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {  // both add the same entries in order: one id each
    writers.emplace_back([&] {
      for (uint32_t i = 0; i < kValues; ++i) {
        const std::string v = value_text(i);
        if (d.add_value(v) != i) bad.fetch_add(1);
        const std::string_view keys[] = {v};
        if (i < AttrDict::kMaxShapes && d.add_shape(keys, 1) != i) bad.fetch_add(1);
      }
    });
  }
  for (auto& t : writers) t.join();
  done.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  CHECK_EQ(bad.load(), 0);
  CHECK_EQ(d.values(), kValues);
}

int main() {
  RUN_TEST(ids_are_deduplicated_and_bounded);
  RUN_TEST(charged_to_the_pool_and_given_back);
  RUN_TEST(compact_form_renders_exactly);
  RUN_TEST(readers_race_no_writer);
  return check::result("attr_dict_test");
}
