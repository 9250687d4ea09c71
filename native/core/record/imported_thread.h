// A thread's timeline whose spans another instance of the core recorded and
// handed over finished: the js backend's workers on the WebAssembly engine
// each record in an instance of their own and hand their records to the
// instance of the tracer they joined (read/handover_batch.h). Here those
// records meet this tracer's rules as a thread's own do: each takes a slot
// from a chunk of the tracer's budget, and under a full budget the pool's
// policy applies (overwrite the oldest chunk, or drop the record and count
// it); a span whose attributes do not fit is dropped whole. Spans the thread
// dropped in its own instance are counted dropped here too; spans refused or
// never sent (back-pressure, a closed receiver, a terminated thread) are
// counted once by the sender's hub instead (the js backend's lostSpans).
//
// One writer: the caller, on a holder thread of the tracer (the records are
// committed as they are stored).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "record/stored_context.h"
#include "record/timeline.h"
#include "record/tracer.h"

namespace hotspan {

// A finished span as the other instance read it (times in CLOCK_MONOTONIC ns).
struct ImportedSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t local = 0;
  uint32_t parent_local = 0;
  uint32_t name = 0;  // the other instance's name id (add_name)
  uint16_t depth = 0;
  uint16_t flags = 0;  // kFlagAbandoned and kFlagError are kept; the rest follow what is given
};

// Stores `span` (its name already this tracer's: `name`) as the record
// `tl`'s writer appends through `cursor` (the caller holds that writer's
// lock), and commits it: as ImportedThread::add describes. `kind_flags`:
// added to the kept ones (kFlagAsync on a track). Dropped whole and counted
// when there is no chunk, or no room for the attributes.
void store_imported(Timeline& tl, ChunkCursor& cursor, int64_t* anchor_due, const ImportedSpan& span, uint32_t name,
                    uint16_t kind_flags, std::string_view attrs, const StoredContext* context,
                    uint64_t foreign_parent);

class ImportedThread {
 public:
  ImportedThread(std::shared_ptr<Tracer> tracer, std::shared_ptr<ThreadState> state);
  ImportedThread(const ImportedThread&) = delete;
  ImportedThread& operator=(const ImportedThread&) = delete;

  uint32_t timeline_id() const;
  // The other instance's name `id` (ids given in order from 0) is `name`.
  // False for an id out of order.
  bool add_name(uint32_t id, std::string_view name);
  // Stores one finished span: kOk (stored, or dropped under the budget and
  // counted), kClosed once the tracer closed (nothing stored, nothing
  // counted: the trace is final), kInvalid for a name id not added.
  // `attrs`: JSON object text ("": none); `context` and `foreign_parent`
  // (0: none) as begin_in_context stores them.
  Status add(const ImportedSpan& span, std::string_view attrs, const StoredContext* context,
             uint64_t foreign_parent);
  // A span of the thread's track `track` (its tracer-wide timeline id;
  // `name`: its timeline name, "track: <name>" for a user's track;
  // made here under that id if this tracer has no track `name` yet; found
  // by its id, it keeps its kind): as add, on that track. A track of that
  // name under another id, or that id naming another timeline (a caller's
  // mistake): the span is counted dropped on this thread.
  Status add_track_span(uint32_t track, std::string_view name, bool serial, const ImportedSpan& span,
                        std::string_view attrs, const StoredContext* context, uint64_t foreign_parent);
  // A group the thread recorded: on this tracer's groups timeline, its local
  // ids renumbered there (a parent ends after its children).
  Status add_group(const ImportedSpan& span, std::string_view attrs);
  // `n` spans the thread dropped in its own instance: counted dropped.
  void count_lost(uint64_t n);
  // The thread exited (or was stopped): its timeline says so.
  void mark_exited();

 private:
  const std::shared_ptr<Tracer> tracer_;
  const std::shared_ptr<ThreadState> state_;  // its timeline and cursor; never begun on
  std::vector<uint32_t> names_;               // the other instance's name id -> this tracer's
  std::unordered_map<uint32_t, uint32_t> group_locals_;  // the thread's group local id -> this tracer's
  uint32_t group_local(GroupTrack& groups, uint32_t remote);
};

}  // namespace hotspan
