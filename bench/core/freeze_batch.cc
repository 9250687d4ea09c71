// The cost of one stream batch's freeze (RecordCursor::next, 1024 new spans)
// after a tracer has recorded for a while, for callgrind: its instruction
// count is what the anchors a freeze copies add as a recording gets longer.
// Build against the core and run (see the README's bench notes):
//   g++ -O2 -std=c++17 -Inative/core -Inative/include bench/core/freeze_batch.cc \
//     native/build/libhotspan_core.a -lpthread -o /tmp/freeze_batch
//   valgrind --tool=callgrind --collect-atstart=no \
//     --toggle-collect='timed_batch*' /tmp/freeze_batch CHUNKS BATCHES
// then instructions per batch = the total Ir / BATCHES. CHUNKS: chunks
// recorded (1024 spans each) through a 1 MiB overwrite budget before the
// batches are timed. With BATCHES 0 and the whole run collected, the
// difference between two CHUNKS over their spans is the recording cost per
// span in steady state (what the anchor upkeep adds to the writer).
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "record/clock.h"
#include "read/record_cursor.h"
#include "record/thread_state.h"
#include "record/tracer.h"

using namespace hotspan;

static void record_chunk(ThreadState& st, uint32_t name) {
  for (uint32_t i = 0; i < kChunkRecords; ++i) {
    begin(st, name, clock::now_ticks());
    end(st, clock::now_ticks());
  }
}

// Only the timed batches, not the first drain of what was recorded before.
__attribute__((noinline)) bool timed_batch(RecordCursor& cursor, FrozenSnapshot& batch) {
  return cursor.next(batch);
}

int main(int argc, char** argv) {
  const long chunks = argc > 1 ? std::atol(argv[1]) : 1000;
  const long batches = argc > 2 ? std::atol(argv[2]) : 100;
  TracerOptions o;
  o.origin_ns = clock::now_ns();
  o.time_unit = TimeUnit::kTicks;
  o.memory_limit = memory_limit::kMin;
  o.on_full = FullPolicy::kOverwrite;
  std::shared_ptr<Tracer> t = Tracer::create(o);
  const uint32_t name = t->intern("op");
  auto st = t->attach_js_thread("main");
  for (long c = 0; c < chunks; ++c) record_chunk(*st, name);
  auto cursor = RecordCursor::open(t);
  FrozenSnapshot batch;
  while (cursor->next(batch)) {
  }
  uint64_t spans = 0;
  for (long b = 0; b < batches; ++b) {
    record_chunk(*st, name);
    if (timed_batch(*cursor, batch)) spans += batch.timelines.empty() ? 0 : batch.timelines[0].records.size();
  }
  std::printf("chunks %ld batches %ld spans/batch %.0f\n", chunks, batches,
              static_cast<double>(spans) / static_cast<double>(batches));
  t->detach_thread(*st, t->now());
  return 0;
}
