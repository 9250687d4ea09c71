// A native thread that exits with spans open while another thread closes the
// tracer: the exit ends the open spans (abandoned) one by one, and close()
// may land in the middle. The exit must still finish. Found by
// c_api_fuzz_replay under TSan: end() refused after the close and the loop
// never ended. Deep stacks make the abandon loop long enough that close()
// lands inside it in most rounds.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "record/c_api.h"
#include "check.h"
#include "hotspan.h"
#include "record/tracer.h"

int main() {
  constexpr int kRounds = 20;
  constexpr uint32_t kDepth = 60000;
  std::atomic<bool> done{false};
  // A hang is the failure: report it instead of waiting for ctest's timeout.
  std::thread watchdog([&done] {
    for (int i = 0; i < 1200 && !done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!done.load()) {
      std::fprintf(stderr, "thread_exit_close_test: a thread exit did not finish (abandon loop after close)\n");
      std::_Exit(1);
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    hotspan::TracerOptions options;
    options.time_unit = hotspan::TimeUnit::kTicks;
    auto tracer = hotspan::Tracer::create(options);
    const hotspan_api_v1* api = hotspan::c_api_for(tracer);
    uint32_t name = 0;
    CHECK_EQ(api->intern(api->tracer, "deep", 4, &name), HOTSPAN_OK);
    std::atomic<bool> opened{false};
    std::thread t([&] {
      for (uint32_t i = 0; i < kDepth; ++i) api->begin(api->tracer, name);
      opened.store(true);
      // Exit with kDepth spans open.
    });
    while (!opened.load()) std::this_thread::yield();
    tracer->close();
    t.join();
  }
  done.store(true);
  watchdog.join();
  return check::result("thread_exit_close_test");
}
