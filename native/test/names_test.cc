// Name table: dense ids from 0, idempotent interning, thread safety.
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "record/tracer.h"

using namespace hotspan;

static void dense_and_idempotent() {
  auto t = Tracer::create();
  CHECK_EQ(t->name_count(), size_t{0});
  const uint32_t a = t->intern("db.query");
  const uint32_t b = t->intern("parse");
  CHECK_EQ(a, 0u);
  CHECK_EQ(b, 1u);
  CHECK_EQ(t->intern("db.query"), a);
  CHECK_EQ(t->intern(std::string_view("parse!", 5)), b);  // not NUL-terminated
  CHECK_EQ(t->name_count(), size_t{2});
  CHECK_EQ(t->name_of(a), std::string("db.query"));
  CHECK_EQ(t->name_of(b), std::string("parse"));
  CHECK_EQ(t->name_of(2), std::string());
  CHECK_EQ(t->name_of(0xFFFFFFFFu), std::string());
  CHECK_EQ(t->intern(""), 2u);  // the empty name is a name like any other
  const FrozenSnapshot s = t->freeze();
  CHECK_EQ(s.names.size(), size_t{3});
  CHECK_EQ(s.names[0], std::string("db.query"));
}

static void separate_tracers_separate_tables() {
  auto t1 = Tracer::create();
  auto t2 = Tracer::create();
  CHECK(t1->id() != t2->id());
  t1->intern("x");
  CHECK_EQ(t2->intern("y"), 0u);
  CHECK_EQ(t2->name_of(0), std::string("y"));
}

static void concurrent_intern() {
  auto t = Tracer::create();
  constexpr int kThreads = 4, kNames = 500;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kNames));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < kNames; ++n) ids[i][n] = t->intern("name" + std::to_string(n));
    });
  }
  for (auto& th : threads) th.join();
  CHECK_EQ(t->name_count(), size_t{kNames});
  for (int n = 0; n < kNames; ++n) {
    for (int i = 1; i < kThreads; ++i) CHECK_EQ(ids[i][n], ids[0][n]);
    CHECK_EQ(t->name_of(ids[0][n]), "name" + std::to_string(n));
  }
}

int main() {
  RUN_TEST(dense_and_idempotent);
  RUN_TEST(separate_tracers_separate_tables);
  RUN_TEST(concurrent_intern);
  return check::result("names_test");
}
