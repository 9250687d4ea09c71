// Name interning and the writers' handling of arbitrary name bytes: the input
// is a list of names (any bytes, duplicates, empty) interned from two threads
// at once. Ids must be dense, one per distinct name, the same on both
// threads, and name_of must give the bytes back; every name then names a
// span and a timeline, and both outputs must decode.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "fuzz_input.h"
#include "record/tracer.h"
#include "write_outputs.h"

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "names_fuzz: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hotspan_fuzz::FuzzInput in(data, size);
  std::vector<std::string> names;
  while (!in.empty() && names.size() < 256) names.push_back(in.str(64));

  auto tracer = hotspan::Tracer::create();
  std::vector<uint32_t> a(names.size()), b(names.size());
  std::thread other([&] {
    for (size_t i = names.size(); i-- > 0;) b[i] = tracer->intern(names[i]);
  });
  for (size_t i = 0; i < names.size(); ++i) a[i] = tracer->intern(names[i]);
  other.join();

  std::map<std::string, uint32_t> distinct;
  for (size_t i = 0; i < names.size(); ++i) {
    require(a[i] == b[i], "two threads got different ids for one name");
    auto it = distinct.emplace(names[i], a[i]).first;
    require(it->second == a[i], "one name has two ids");
    require(tracer->name_of(a[i]) == names[i], "name_of does not give the name back");
  }
  require(tracer->name_count() == distinct.size(), "ids are not one per distinct name");
  for (const auto& [name, id] : distinct) require(id < distinct.size(), "ids are not dense");
  require(tracer->name_of(static_cast<uint32_t>(distinct.size())).empty(), "an unknown id has a name");

  auto thread = tracer->attach_js_thread(names.empty() ? std::string() : names[0]);
  int64_t now = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i % 8 == 1) tracer->set_thread_name(*thread, names[i]);
    hotspan::begin(*thread, a[i], now += 10);
    hotspan::end(*thread, now += 10);
    if (i % 16 == 2) tracer->track(names[i], i % 32 == 2);
  }
  tracer->flush();
  hotspan_fuzz::write_and_check(*tracer, "names_fuzz");
  return 0;
}
