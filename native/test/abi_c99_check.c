/*
 * Compile-only check that native/include/hotspan.h is a self-contained C99
 * header and also valid C++17 (run by abi_header_check.sh with -Werror
 * -pedantic in both languages). Uses every table entry and the helper macros
 * so a signature that only one language accepts fails here, not in a
 * consumer's build.
 */
#include "hotspan.h"

/* C99 has no _Static_assert: a negative array size fails the build instead. */
typedef char hotspan_check_version_first[offsetof(hotspan_api_v1, abi_version) == 0 ? 1 : -1];
typedef char hotspan_check_size_second[offsetof(hotspan_api_v1, struct_size) == 4 ? 1 : -1];

int hotspan_check_use(const hotspan_api_v1* api);

int hotspan_check_use(const hotspan_api_v1* api) {
  uint32_t name = 0;
  uint32_t track = 0;
  uint64_t token = 0;
  int64_t ns;
  double ms;
  hotspan_status s;
  if (api == NULL || api->abi_version != HOTSPAN_ABI_VERSION ||
      api->struct_size < sizeof(hotspan_api_v1)) {
    return -1;
  }
  s = api->intern(api->tracer, "check", 5, &name);
  s = api->set_thread_name(api->tracer, "checker", 7);
  s = api->track(api->tracer, "queue", 5, 1, &track);
  s = api->async_begin(api->tracer, track, name, &token);
  s = api->async_end(api->tracer, token);
#ifdef __cplusplus
  {
    HOTSPAN_SCOPE(api, name);
  }
#else
  s = HOTSPAN_BEGIN(api, name);
  s = HOTSPAN_END(api);
#endif
  s = api->begin(api->tracer, name);
  s = api->end(api->tracer);
  s = api->flush_thread(api->tracer);
  ns = api->now_ns();
  ms = api->now_ms(api->tracer);
  return (int)s + (ns < 0) + (ms < 0.0);
}
