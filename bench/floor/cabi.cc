// Native-thread spans through hotspan's C ABI (native/include/hotspan.h), the
// way another addon would record them: JS hands over tracer.nativeApi(), an
// External holding a const hotspan_api_v1*, and K std::threads each record N
// begin/end pairs. Timed in C++ so no JS is in the loop.
#include <node_api.h>

#include <atomic>
#include <cstdint>

#include "hotspan.h"
#include "thread_race.h"

namespace {

using bench::make_double;

napi_value throw_type(napi_env env, const char* msg) {
  napi_throw_type_error(env, nullptr, msg);
  return nullptr;
}

// run(api, name, n, threads, flushThread) -> [wall ns, mean per-thread CPU ns
// per span, failed calls, page faults, voluntary and involuntary context
// switches (the last three summed over the threads' timed parts)]. Threads start together (spin on a flag) so creation is
// not timed; each thread warms its timeline (first call creates it) with one
// untimed span before the flag.
napi_value Run(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 4) return throw_type(env, "run(api, nameId, n, threads[, flushThread])");
  void* data = nullptr;
  if (napi_get_value_external(env, argv[0], &data) != napi_ok || !data)
    return throw_type(env, "api must be the External from tracer.nativeApi()");
  const hotspan_api_v1* api = static_cast<const hotspan_api_v1*>(data);
  if (api->abi_version != HOTSPAN_ABI_VERSION || api->struct_size < sizeof(hotspan_api_v1))
    return throw_type(env, "api: unsupported hotspan ABI version");
  uint32_t name = 0;
  double nd = 0, td = 1;
  bool flush_thread = false;
  napi_get_value_uint32(env, argv[1], &name);
  napi_get_value_double(env, argv[2], &nd);
  napi_get_value_double(env, argv[3], &td);
  if (argc > 4) napi_get_value_bool(env, argv[4], &flush_thread);
  const uint64_t n = static_cast<uint64_t>(nd);
  const int threads = td < 1 ? 1 : static_cast<int>(td);

  void* tr = api->tracer;
  std::atomic<uint64_t> failed{0};
  const bench::RaceResult race = bench::race_threads(
      threads, n,
      [&](int) {
        // The thread's first call creates its timeline: not timed.
        uint64_t bad = api->begin(tr, name) != HOTSPAN_OK;
        bad += api->end(tr) != HOTSPAN_OK;
        failed.fetch_add(bad);
      },
      [&](int) {
        uint64_t bad = 0;
        for (uint64_t i = 0; i < n; i++) {
          bad += api->begin(tr, name) != HOTSPAN_OK;
          bad += api->end(tr) != HOTSPAN_OK;
        }
        failed.fetch_add(bad);
      },
      [&](int) {
        if (flush_thread) api->flush_thread(tr);
      });
  napi_value arr;
  napi_create_array_with_length(env, 6, &arr);
  napi_set_element(env, arr, 0, make_double(env, static_cast<double>(race.wall_ns)));
  napi_set_element(env, arr, 1, make_double(env, race.cpu_ns_per_span));
  napi_set_element(env, arr, 2, make_double(env, static_cast<double>(failed.load())));
  napi_set_element(env, arr, 3, make_double(env, static_cast<double>(race.counts.faults)));
  napi_set_element(env, arr, 4, make_double(env, static_cast<double>(race.counts.waits)));
  napi_set_element(env, arr, 5, make_double(env, static_cast<double>(race.counts.preempted)));
  return arr;
}

// intern(api, name) -> name id, through the table.
napi_value Intern(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  void* data = nullptr;
  if (argc < 2 || napi_get_value_external(env, argv[0], &data) != napi_ok || !data)
    return throw_type(env, "intern(api, name)");
  const hotspan_api_v1* api = static_cast<const hotspan_api_v1*>(data);
  char buf[256];
  size_t len = 0;
  if (napi_get_value_string_utf8(env, argv[1], buf, sizeof buf, &len) != napi_ok)
    return throw_type(env, "name must be a string");
  uint32_t id = 0;
  if (api->intern(api->tracer, buf, len, &id) != HOTSPAN_OK) return throw_type(env, "intern failed");
  return make_double(env, id);
}

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "run", NAPI_AUTO_LENGTH, Run, nullptr, &fn);
  napi_set_named_property(env, exports, "run", fn);
  napi_create_function(env, "intern", NAPI_AUTO_LENGTH, Intern, nullptr, &fn);
  napi_set_named_property(env, exports, "intern", fn);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
