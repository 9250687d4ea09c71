// An addon that records spans into a hotspan trace from its own std::threads
// with native/include/hotspan.hpp. JS passes it tracer.nativeApi() once
// (attach), then calls parallel() and handoff(); see run.js.
#include <node_api.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "hotspan.hpp"

namespace {

// Some work to measure: a checksum over a chunk of bytes.
uint64_t checksum(const std::vector<uint8_t>& bytes) {
  HOTSPAN_SCOPE("chunk.checksum");
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

uint64_t process_chunk(uint32_t index, uint32_t chunk_bytes) {
  HOTSPAN_SCOPE("chunk");  // interned once, on the first call from any thread
  std::vector<uint8_t> bytes(chunk_bytes);
  for (uint32_t i = 0; i < chunk_bytes; ++i) bytes[i] = static_cast<uint8_t>(index * 31 + i);
  return checksum(bytes);
}

// parallel(chunks, threads, chunkBytes): thread t ("worker#t") processes
// chunks t, t + threads, ...; each thread's work is one "worker" span with a
// "chunk" span per chunk, each with a nested "chunk.checksum".
napi_value Parallel(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  uint32_t chunks = 0, threads = 0, chunk_bytes = 0;
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 3 || napi_get_value_uint32(env, argv[0], &chunks) != napi_ok ||
      napi_get_value_uint32(env, argv[1], &threads) != napi_ok ||
      napi_get_value_uint32(env, argv[2], &chunk_bytes) != napi_ok || threads == 0 || threads > 64) {
    napi_throw_type_error(env, nullptr, "parallel(chunks, threads, chunkBytes): numbers, 1 <= threads <= 64");
    return nullptr;
  }
  std::vector<uint64_t> sums(threads, 0);
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([t, threads, chunks, chunk_bytes, &sums] {
      hotspan::set_thread_name("worker#" + std::to_string(t));
      HOTSPAN_SCOPE("worker");
      for (uint32_t c = t; c < chunks; c += threads) sums[t] ^= process_chunk(c, chunk_bytes);
    });
  }
  for (auto& th : pool) th.join();  // thread exit publishes what each recorded
  uint64_t sum = 0;
  for (uint64_t s : sums) sum ^= s;
  napi_value out;
  napi_create_double(env, static_cast<double>(sum & 0xffffffffu), &out);
  return out;
}

// handoff(jobs): thread "producer" begins one async "job" span per job on the
// track "jobs" and hands them over; thread "finisher" does the rest of each
// job and ends its span, on a thread other than the one that began it.
napi_value Handoff(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  uint32_t jobs = 0;
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 1 || napi_get_value_uint32(env, argv[0], &jobs) != napi_ok) {
    napi_throw_type_error(env, nullptr, "handoff(jobs): jobs must be a number");
    return nullptr;
  }
  std::vector<hotspan::AsyncScope> open;
  std::thread producer([&open, jobs] {
    hotspan::set_thread_name("producer");
    HOTSPAN_SCOPE("produce");
    for (uint32_t i = 0; i < jobs; ++i) open.push_back(HOTSPAN_ASYNC("jobs", "job"));
  });
  producer.join();
  uint32_t ended = 0;
  std::thread finisher([&open, &ended] {
    hotspan::set_thread_name("finisher");
    HOTSPAN_SCOPE("finish");
    for (hotspan::AsyncScope& job : open) ended += job.end() == HOTSPAN_OK;
  });
  finisher.join();
  napi_value out;
  napi_create_uint32(env, ended, &out);
  return out;
}

// attach(api): binds tracer.nativeApi() for this addon.
napi_value Attach(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void* data = nullptr;
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 1 || napi_get_value_external(env, argv[0], &data) != napi_ok) {
    napi_throw_type_error(env, nullptr, "attach(api): api must be tracer.nativeApi()");
    return nullptr;
  }
  const hotspan::Attach a = hotspan::attach(static_cast<const hotspan_api_v1*>(data));
  if (a != hotspan::Attach::kOk) napi_throw_error(env, "ERR_HOTSPAN_ABI", hotspan::describe(a));
  return nullptr;
}

}  // namespace

NAPI_MODULE_INIT() {
  const napi_property_descriptor props[] = {
      {"attach", nullptr, Attach, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"parallel", nullptr, Parallel, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"handoff", nullptr, Handoff, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}
