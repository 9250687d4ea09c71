// The tracer core: the one entry point the binding and the C ABI use.
// No Node headers here or anywhere under native/core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "record/async_caller.h"
#include "record/counter_series.h"
#include "record/cpu_profile.h"
#include "record/frozen_records.h"
#include "hotspan.h"
#include "record/memory_limit.h"
#include "record/record_counts.h"
#include "record/span_record.h"
#include "record/stored_context.h"

namespace hotspan {

// The C ABI's codes (hotspan.h), by name.
// <generated from schema/boundary.json by scripts/gen-boundary.mjs (npm run gen)>
enum class Status : int {
  kOk = HOTSPAN_OK,  // done
  kClosed = HOTSPAN_CLOSED,  // the tracer was closed; nothing recorded
  kNoOpenSpan = HOTSPAN_NO_OPEN_SPAN,  // end() with no open span on this thread; nothing changed
  kInvalid = HOTSPAN_INVALID,  // bad argument: unknown name, track, token or thread state, NULL pointer
};
// </generated>

enum class TimelineKind : uint8_t { kJs = 0, kNative = 1, kTrack = 2, kGroups = 3 };

// What the `now` passed to begin/end/async/group/detach is, i.e. what records
// store until they are read. Snapshots, stats and writers always see ns.
enum class TimeUnit : uint8_t {
  // CLOCK_MONOTONIC ns (clock::now_ns), or any caller-chosen ns (synthetic
  // times in tests): stored and read back unchanged.
  kNs = 0,
  // clock::now_ticks() values (the TSC when invariant), converted to
  // CLOCK_MONOTONIC ns through per-timeline anchors when read. Without a
  // usable TSC now_ticks() is now_ns() and conversion is the identity.
  kTicks = 1,
};

// What an async span's end may set that its begin did not know yet (the
// OpenTelemetry API sets the name, the attributes and the start time late).
// Given times are CLOCK_MONOTONIC ns, measured elsewhere (in JS); the
// track's timeline converts them to its unit (Timeline::tick_of_ns), so
// they read back as given and equal times give equal record times.
struct AsyncEndChanges {
  bool has_start = false;
  int64_t start_ns = 0;
  bool has_end = false;        // else the end is async_end's `now`
  int64_t end_ns = 0;
  uint32_t name = UINT32_MAX;  // UINT32_MAX: the begin's
  bool has_attrs = false;
  std::string attrs_json;      // replaces the begin's ("" : none)
};

struct TracerOptions {
  TimeUnit time_unit = TimeUnit::kNs;  // the binding and the C ABI's users: kTicks
  // Raw monotonic ns at performance.now() == 0, so ms = (ns - origin_ns) / 1e6.
  int64_t origin_ns = 0;
  // Pending records past which the wake callback fires (coalesced).
  size_t wake_high_water = 4096;
  // The budget for records and side tables, in bytes (memory_limit::kMin to
  // kMax; clamped), and what happens when it is full.
  size_t memory_limit = memory_limit::kDefault;
  FullPolicy on_full = FullPolicy::kOverwrite;
  // The salt of the tracer's W3C ids (trace_id.h); 0: random.
  uint64_t id_salt = 0;
  // The head sampler of its traces (sampler.h); 0: parentbased_always_on.
  uint64_t sampler = 0;
  // The tail keep of its outputs (tail_keep.h, read/trace_keep.h); 0: none.
  uint64_t keep = 0;
  // Span names that keep their trace whole in that tail keep
  // (TraceKeep::keep_name); with them `keep` carries the maxWait bits.
  std::vector<std::string> keep_names;
  // The name its documents give the process (document_info.h): Chrome
  // JSON's process_name metadata, Perfetto's process descriptor.
  std::string process_name = "hotspan";
};

// Per (tracer, thread): the thread's timeline, open-span stack and owner-written
// chunk. Opaque outside the core.
class ThreadState;
class Timeline;
class AttrDict;
class ChunkPool;
class ImportedThread;
class AsyncTrack;
class GroupTrack;

// One timeline's committed records with what describes them. Records is
// FrozenRecords (a FrozenSnapshot, what Tracer::freeze returns: read in
// place, see frozen_records.h) or SpanRecords (a Snapshot: records already
// materialized, e.g. by a caller that has no Tracer; the writers and stats
// take either).
template <typename Records>
struct BasicSnapshotTimeline {
  uint32_t id = 0;
  std::string name;
  TimelineKind kind = TimelineKind::kJs;
  bool serial = false;                         // kTrack only: a serial track
  bool exited = false;                         // its thread exited / env closed
  Records records;                             // committed only, in end order
  std::vector<std::pair<uint32_t, std::string>> attrs;   // local id -> JSON object text
  std::vector<std::pair<uint32_t, uint64_t>> foreign_parents;  // local id -> span id
  std::vector<std::pair<uint32_t, StoredContext>> contexts;    // local id -> its trace context
  // What the timeline produced and what of it `records` holds (kept).
  RecordCounts counts;
};

template <typename TimelineCopy>
struct BasicSnapshot {
  std::vector<std::string> names;  // index = name id
  std::vector<TimelineCopy> timelines;
  std::vector<CounterSeries> counters;  // counter tracks (Tracer::counter)
  // CPU samples (Tracer::cpu_profile), shared with the store, in the order added.
  std::vector<std::shared_ptr<const CpuProfile>> cpu_profiles;
  uint64_t cpu_samples_dropped = 0;  // refused by the store's bound
};

using SnapshotTimeline = BasicSnapshotTimeline<SpanRecords>;
using Snapshot = BasicSnapshot<SnapshotTimeline>;
using FrozenTimeline = BasicSnapshotTimeline<FrozenRecords>;
using FrozenSnapshot = BasicSnapshot<FrozenTimeline>;

// One timeline's counts, as Tracer::counts() lists them.
struct TimelineCounts {
  uint32_t id = 0;
  std::string name;
  RecordCounts counts;
};

struct StatsRow {
  uint32_t name = 0;
  uint64_t count = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  double mean_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0;  // from the histogram
};

class Tracer : public std::enable_shared_from_this<Tracer> {
 public:
  static std::shared_ptr<Tracer> create(TracerOptions options = {});
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  uint64_t id() const;  // unique in the process, never reused
  uint64_t id_salt() const;  // salt of the W3C ids of its spans (trace_id.h)
  uint64_t sampler() const;  // head sampler of its traces (sampler.h)
  uint64_t keep() const;     // tail keep of its outputs (tail_keep.h)
  const std::vector<std::string>& keep_names() const;  // its names (TracerOptions::keep_names)
  int64_t origin_ns() const;
  const std::string& process_name() const;  // as given in the options
  TimeUnit time_unit() const;  // as requested in the options
  // "Now" in the tracer's unit: what begin/end/... expect as `now`.
  int64_t now() const;

  // ---- names (thread-safe) ----
  uint32_t intern(std::string_view name);
  std::string name_of(uint32_t id) const;  // "" when unknown
  size_t name_count() const;

  // ---- threads ----
  // A JS env attaches its thread: a holder timeline. The returned state stays
  // valid (as a no-op once closed) for as long as the caller holds it.
  // `timeline`: 0 numbers it as this tracer's own; a joined thread recording
  // in this instance for another's tracer gives the id it takes there
  // (registry.h's kFirstJoinedTimeline and up): nullptr for an id not
  // accepted.
  std::shared_ptr<ThreadState> attach_js_thread(std::string_view display_name, uint32_t timeline = 0);
  // Ends the thread's open spans (flagged abandoned) at `now`, commits its
  // records and marks its timeline exited. Called at env cleanup.
  void detach_thread(ThreadState& state, int64_t now);
  // The calling native (non-holder) thread's state, cached in a thread_local
  // keyed by tracer id; its timeline ("native N") is created on first use.
  // Thread exit publishes what the thread recorded and marks it exited.
  // Returns nullptr once the tracer is closed.
  std::shared_ptr<ThreadState> native_thread();
  void set_thread_name(ThreadState& state, std::string_view name);
  // A JS thread's timeline whose spans another instance of the core records
  // and hands over finished (record/imported_thread.h), under the tracer-wide
  // id `timeline` the thread's own instance numbers its spans with
  // (registry.h's kFirstJoinedTimeline and up, not taken yet); nullptr once
  // closed or for an id not accepted.
  std::shared_ptr<ImportedThread> import_thread(std::string_view display_name, uint32_t timeline);

  // ---- async spans on tracks (begin on one thread, end on any) ----
  // Idempotent by name; returns the timeline id. 0 when closed, or when the
  // name is a track of the other kind (serial vs concurrent). Its timeline is
  // "track: <name>", or `name` itself when `as_named` (Registry::track).
  // `id` (0: this tracer's own numbering): the tracer-wide id a joined
  // thread's instance, or the tracer it joined, gives the track (Registry::track).
  uint32_t track(std::string_view name, bool serial, bool as_named = false, uint32_t id = 0);
  // A joined thread's instance: the next async span begun on `track` takes
  // the local id `local` (one the shared tracer gave out), so its span id is
  // the one the tracer it joined stores. kInvalid for an unknown track or 0.
  Status set_next_async_local(uint32_t track, uint32_t local);
  // The track of timeline `id` (nullptr: none), for an import
  // (record/imported_thread.h).
  std::shared_ptr<AsyncTrack> find_track(uint32_t id) const;
  // Returns a token (never 0); 0 when closed or the track is unknown.
  // `caller`: the calling binding's cache (async_caller.h), or nullptr.
  // `context` (optional): the span's stored trace context (kFlagContext).
  uint64_t async_begin(uint32_t track, uint32_t name, int64_t now, std::string_view attrs_json = {},
                       uint64_t parent_span = 0, AsyncCaller* caller = nullptr,
                       const StoredContext* context = nullptr);
  Status async_end(uint64_t token, int64_t now, uint16_t extra_flags = 0,
                   AsyncCaller* caller = nullptr);
  // async_end that also applies `changes`; kInvalid (nothing ended) for an
  // unknown name id.
  Status async_end(uint64_t token, int64_t now, uint16_t extra_flags, AsyncEndChanges changes);
  size_t open_async() const;
  std::vector<std::pair<uint64_t, uint32_t>> open_async_spans() const;  // token, name

  // ---- span groups (tracer-wide phases, on the group track) ----
  Status group_begin(uint32_t name, int64_t now, std::string attrs_json = {});
  Status group_end(int64_t now);  // kNoOpenSpan when no group is open
  size_t open_groups() const;
  // The groups track (made on first use when `create`; nullptr once closed),
  // under the explicit timeline `id` (0: this tracer's own numbering) when made.
  std::shared_ptr<GroupTrack> group_track(bool create, uint32_t id = 0);

  // ---- counters (thread-safe) ----
  // A sample of the counter `name` (created on first use) at `now_ns`, in
  // CLOCK_MONOTONIC ns (clock::now_ns()) whatever the tracer's time unit.
  // kInvalid for a value that is not finite; kClosed once closed. A series
  // keeps CounterStore::kMaxSamples samples and counts the rest as dropped.
  Status counter(std::string_view name, int64_t now_ns, double value);

  // ---- CPU samples (thread-safe) ----
  // Keeps a batch of V8 samples of one thread (cpu_profile.h), bounded by
  // a quarter of the memory budget; samples past it are counted in
  // cpu_samples_dropped(). kInvalid for inconsistent tables; kClosed once closed.
  Status cpu_profile(CpuProfile profile);
  uint64_t cpu_samples_dropped() const;

  // ---- finalization ----
  // Drains the pending queue and commits every timeline's written records.
  // Call on a holder thread (the binding does); tests may call it anywhere.
  void flush();
  size_t pending() const;
  // Called on a producer thread, at most once until the next drain, when the
  // pending queue passes wake_high_water. Must not block.
  void set_wake(std::function<void()> wake);

  // ---- reading (thread-safe, committed records only) ----
  // Every committed record, read in place (see frozen_records.h): what the
  // writers, stats and the binding's snapshot read. Costs a pointer per
  // 1024 records.
  FrozenSnapshot freeze() const;
  // Per timeline: produced = kept + overwritten + dropped, over committed
  // records (flush first to count what waits in the queue).
  std::vector<TimelineCounts> counts() const;
  // True once any record was dropped or overwritten (one relaxed load).
  bool lost_any() const;
  size_t memory_limit() const;
  FullPolicy on_full() const;
  size_t memory_used() const;
  // Records of traces the sampling did not keep that the tracer's consuming
  // outputs (the OTLP export, streams) left out, each counted once: by the
  // output that read it first (RecordCursor::first_read), however many
  // outputs leave it out. counts().sampledOut; docs/sampling.md.
  void count_sampled_out(uint64_t n) const;
  uint64_t sampled_out() const;
  // For consumers (record_cursor.h): every timeline so far, the budget, and
  // the name table.
  std::vector<std::shared_ptr<Timeline>> timelines() const;
  ChunkPool& pool() const;
  // The attribute dictionary of the compact stored form (attr_dict.h).
  AttrDict& attr_dict() const;
  std::vector<std::string> names() const;

  // Idempotent. Later calls record nothing and return kClosed; committed
  // records stay readable.
  void close();
  bool closed() const;

  struct Impl;

 private:
  explicit Tracer(TracerOptions options);
  std::unique_ptr<Impl> impl_;
};

// ---- the hot path: one thread's own spans ----
// Free functions on the state, so that a native thread holding its state may
// call them at any time, even after the tracer was closed or destroyed (the
// state keeps what it touches alive; they then return kClosed).
Status begin(ThreadState& state, uint32_t name, int64_t now);
Status begin_with_attrs(ThreadState& state, uint32_t name, int64_t now, std::string_view attrs_json);
// A binding's attribute fast path: it appended the span's attribute bytes
// (attr_slots) to the state's attr_bytes from `mark` on; they are kept with
// the span, or cut off again when it does not begin. No allocation in steady
// state.
Status begin_with_attr_bytes(ThreadState& state, uint32_t name, int64_t now, size_t mark);
Status end(ThreadState& state, int64_t now, uint16_t extra_flags = 0);
// begin under a given trace context and/or parent span: `context` (when its
// trace is valid) is stored for the span (kFlagContext), `parent_span` (a
// tracer-wide span id, not 0) becomes its parent record (kFlagParentElsewhere)
// instead of the innermost open span.
Status begin_in_context(ThreadState& state, uint32_t name, int64_t now, std::string attrs_json,
                        const StoredContext* context, uint64_t parent_span);
// The ids of the innermost open span (on the owning thread): its trace is its
// own or its nearest open ancestor's stored context, else derived from the
// bottom open span. resolved == false when no span is open.
struct SpanIds;
SpanIds open_span_ids(const ThreadState& state, uint64_t salt, uint64_t sampler = 0);
size_t open_depth(const ThreadState& state);
// Local id of the innermost open span (0: none); start() handles check it.
uint32_t innermost_local(const ThreadState& state);
uint32_t timeline_id(const ThreadState& state);
// Queues the records this (non-holder) thread stored since its last batch, so
// the next drain finalizes them without waiting for a full batch or thread
// exit (the C ABI's flush_thread). A holder's records are already final: kOk.
Status publish(ThreadState& state);
// For the binding: native/core/record/thread_state.h has inline forms of begin/end
// (hotspan::fast::begin / fast::end) with the same semantics.

}  // namespace hotspan
