// The part of a tracer that its threads' states keep alive: closed flag,
// names, pending queue and wake signal. A native thread may hold its state
// after the Tracer is gone; everything it touches then lives here.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "record/attr_dict.h"
#include "record/chunk_pool.h"
#include "record/clock.h"
#include "record/name_table.h"
#include "record/pending_queue.h"
#include "record/wake_signal.h"

namespace hotspan {

class Timeline;

struct TracerShared {
  TracerShared(uint64_t id, size_t wake_high_water, bool ticks_clock, size_t memory_limit,
               FullPolicy on_full)
      : tracer_id(id),
        ticks(ticks_clock),
        start_anchor(ticks_clock ? clock::measure_anchor() : clock::Anchor{0, 0}),
        pool(std::make_shared<ChunkPool>(memory_limit, on_full)),
        dict(std::make_shared<AttrDict>(pool)),
        wake(wake_high_water) {}

  const uint64_t tracer_id;
  // Record times are clock::now_ticks() values (TimeUnit::kTicks), else ns.
  const bool ticks;
  // A (tick, ns) pair read when the tracer was made: every timeline's first
  // anchor (Timeline), so a tick between it and a timeline's own first anchor
  // converts over that long segment. A time given from JS (asyncFinish) on a
  // track made later is then converted alike on every timeline, instead of
  // extrapolated from two anchors perhaps microseconds apart.
  const clock::Anchor start_anchor;
  // The budget every timeline of the tracer draws its chunks from.
  const std::shared_ptr<ChunkPool> pool;
  // Attribute shapes and values of the compact stored form; every timeline
  // renders its entries through it.
  const std::shared_ptr<AttrDict> dict;
  std::atomic<bool> closed{false};
  // close() made its final commit: the closed trace is fixed from here on.
  std::atomic<bool> close_done{false};
  NameTable names;
  // Its own cache lines: producers write the queue every batch, while every
  // begin() reads names.count().
  alignas(64) PendingQueue queue;
  WakeSignal wake;

  // A record timestamp for "now" in this tracer's unit.
  int64_t now() const { return ticks ? clock::now_ticks() : clock::now_ns(); }

  // Producer: queue `records` new records of `timeline` (stored up to
  // `written`), then wake a holder if the queue passed its high-water mark.
  void enqueue(Timeline* timeline, uint64_t written, uint32_t records) {
    wake.maybe_fire(queue.push(timeline, written, records));
  }
  // Holder: finalize everything queued and re-arm the wake.
  void drain() {
    queue.drain();
    wake.rearm();
  }
};

}  // namespace hotspan
