// Compile-only check that native/include/hotspan.hpp is a self-contained
// C++17 header (run by abi_header_check.sh with -Wall -Wextra -Werror
// -pedantic). Uses every helper, both HOTSPAN_SCOPE forms and HOTSPAN_ASYNC,
// so a construct only one compiler accepts fails here, not in a consumer's build.
#include "hotspan.hpp"

#include <utility>

namespace {
const hotspan::Name kOuter("check.outer");
const hotspan::Track kQueue("check.queue", /*serial=*/true);
}  // namespace

int hotspan_hpp_check_use(const hotspan_api_v1* api, uint32_t name_id);

int hotspan_hpp_check_use(const hotspan_api_v1* api, uint32_t name_id) {
  const hotspan::Attach a = hotspan::attach(api);
  if (a != hotspan::Attach::kOk) return hotspan::describe(a)[0];
  int n = hotspan::set_thread_name("checker") == HOTSPAN_OK;
  {
    hotspan::Scope outer(kOuter);
    HOTSPAN_SCOPE("check.inner");
    HOTSPAN_SCOPE(api, name_id);  // hotspan.h's form still works
    n += outer.recording();
  }
  hotspan::AsyncScope job(kQueue, kOuter);
  hotspan::AsyncScope moved = std::move(job);
  auto other = HOTSPAN_ASYNC("check.track", "check.async");
  other = std::move(moved);
  n += other.end() == HOTSPAN_OK;
  n += hotspan::flush_thread() == HOTSPAN_OK;
  n += hotspan::attached() == api;
  hotspan::detach();
  return n;
}
