// A thread's finished records handed from the core instance that recorded
// them to the one that keeps them: the js backend's workers on the
// WebAssembly engine record in an instance of their own (the same hot path as
// the main thread's) and hand what they ended to the instance of the tracer
// they joined, which stores it as that thread's timeline under its own
// budget (record/imported_thread.h). The batch is bytes, so it crosses
// between instances (and threads) as a copy; nothing in it points anywhere.
//
// The sending side reads its tracer with a RecordCursor, so the chunks it
// handed over go back to its own budget as released (read), never as lost.
// What its budget lost before a batch was taken (a thread that outran its
// hand-overs) travels in the next batch as a count and is counted dropped on
// the receiving timeline: produced there = every span the thread ended.
//
// Besides the thread's own timeline, a batch carries the thread's async
// tracks and its groups, each as a section: the receiving side stores a
// track's records on its track of that name under the same tracer-wide id
// (made there if it has none yet), and the groups on its groups timeline
// (local ids renumbered there, as groups are tracer-wide phases).
//
// Layout (little endian): u32 kHandoverVersion, u32 first new name id,
// u32 new names, u32 records (all sections), u64 lost since the last batch;
// each new name (u32 size, bytes); u32 sections; each section: u8 timeline
// kind (record/tracer.h's TimelineKind), u8 serial, u16 0, u32 timeline id,
// u32 size and the track's timeline name ("" but for a track), u32 records,
// then each record: i64 start ns, i64 end ns, u32 local, u32 parent local,
// u32 name, u16 depth, u16 flags, u32 attribute bytes and the attributes'
// JSON; with kFlagParentElsewhere u64 the given parent span; with
// kFlagContext u64 trace hi, u64 trace lo, u64 parent wire id, u32 W3C
// flags, u32 tracestate bytes and the tracestate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "read/record_cursor.h"
#include "record/imported_thread.h"
#include "record/tracer.h"

namespace hotspan {

constexpr uint32_t kHandoverVersion = 0x32425348;  // "HSB2"

class HandoverSource {
 public:
  // nullptr when the tracer has no consumer slot left.
  static std::unique_ptr<HandoverSource> open(std::shared_ptr<const Tracer> tracer);

  // Replaces `out` with a batch of the records of thread timelines committed
  // since the last take (at most max_records), the names interned since, and
  // the spans the budget lost since. Returns the records in it.
  uint64_t take(std::string& out, uint64_t max_records = UINT64_MAX);

 private:
  HandoverSource(std::shared_ptr<const Tracer> tracer, std::unique_ptr<RecordCursor> cursor);

  const std::shared_ptr<const Tracer> tracer_;
  const std::unique_ptr<RecordCursor> cursor_;
  uint32_t names_sent_ = 0;
  uint64_t lost_sent_ = 0;
};

// Stores a batch from HandoverSource::take (or one strip_records cut: its
// names and the spans its sender's budget lost, no record) into `into`.
// kOk, kClosed (the
// receiving tracer closed: nothing more is stored), or kInvalid for bytes
// that are not a whole batch (what came before the fault is kept).
// *stored: the records the batch held that reached the budget (kept, or
// dropped and counted there).
Status import_batch(ImportedThread& into, const uint8_t* data, size_t size, uint64_t* stored);

// Cuts a batch from HandoverSource::take down to what a refused batch still
// carries: its names and the
// spans its sender's budget lost, with no section and no record. The sender
// posts that instead of the records back-pressure refused, so a worker that
// outruns its receiver sends a few bytes per batch, not the records. kOk, or
// kInvalid (batch unchanged) for bytes that do not start as a whole batch.
Status strip_records(std::string& batch);

}  // namespace hotspan
