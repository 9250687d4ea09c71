// The recording core's entry points in the WebAssembly module (hs_rec_*):
// the same Tracer, timelines, budget, tracks and groups the addon runs,
// built for one thread (record/platform_lock.h), so the js backend can record
// through the core instead of beside it. A tracer and a thread's state are
// handles (> 0; 0: none). Times are given as performance.now() ms (a double,
// no BigInt per call) and stored as CLOCK_MONOTONIC ns from the tracer's
// origin (TimeUnit::kNs); the core's own clock reads are the host's `now_ns`
// import (record/clock.h).
//
// Strings are passed as an hs_alloc buffer, which the call takes over; a
// document is the result (result.h).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exports.h"
#include "result.h"
#include "snapshot_columns.h"
#include "export/export_cursor.h"
#include "read/handover_batch.h"
#include "read/trace_keep.h"
#include "record/clock.h"
#include "record/group_track.h"
#include "record/imported_thread.h"
#include "record/memory_limit.h"
#include "record/span_ids.h"
#include "record/stored_context.h"
#include "record/registry.h"
#include "record/tracer.h"
#include "write/chrome_json_writer.h"
#include "write/document_info.h"
#include "write/perfetto_writer.h"

namespace {

// Handles are indexes + 1 into these tables; a closed tracer keeps its slot
// (its records stay readable) until hs_rec_free.
// A thread's state and its tracer's origin, which its times are from.
struct Thread {
  std::shared_ptr<hotspan::ThreadState> state;
  int64_t origin_ns = 0;
  uint64_t salt = 0;     // its tracer's id salt (open_ids)
  uint64_t sampler = 0;  // its tracer's head sampler (open_ids' flags)
};

template <typename T>
std::vector<std::shared_ptr<T>>& table() {
  static auto* t = new std::vector<std::shared_ptr<T>>();  // no static constructors in a reactor
  return *t;
}

template <typename T>
T* at(uint32_t handle) {
  auto& t = table<T>();
  return handle >= 1 && handle <= t.size() ? t[handle - 1].get() : nullptr;
}

template <typename T>
uint32_t add(std::shared_ptr<T> p) {
  auto& t = table<T>();
  for (size_t i = 0; i < t.size(); ++i) {
    if (!t[i]) {
      t[i] = std::move(p);
      return static_cast<uint32_t>(i + 1);
    }
  }
  t.push_back(std::move(p));
  return static_cast<uint32_t>(t.size());
}

// A tracer's OTLP export read (hs_rec_export_*), by tracer handle - 1.
std::vector<std::unique_ptr<hotspan::ExportCursor>>& export_cursors() {
  static auto* c = new std::vector<std::unique_ptr<hotspan::ExportCursor>>();
  return *c;
}

hotspan::ExportCursor* export_cursor(uint32_t tracer) {
  auto& c = export_cursors();
  return tracer >= 1 && tracer <= c.size() ? c[tracer - 1].get() : nullptr;
}

// The process name a tracer's documents give (hs_rec_process_name), by
// tracer handle - 1; empty: the writers' default.
std::vector<std::string>& process_names() {
  static auto* n = new std::vector<std::string>();
  return *n;
}

// The span names that keep a trace whole in a tracer's tail keep
// (hs_rec_keep_name, sample.keep.names), by tracer handle - 1.
std::vector<std::vector<std::string>>& keep_names() {
  static auto* n = new std::vector<std::vector<std::string>>();
  return *n;
}

// The records the last hs_rec_write wrote.
double& written_records() {
  static double n = 0;
  return n;
}

// The longest name hs_rec_process_name takes, in bytes (the addon's bound).
constexpr size_t kMaxProcessName = 1024;

void close_export(uint32_t tracer) {
  auto& c = export_cursors();
  if (tracer >= 1 && tracer <= c.size()) c[tracer - 1].reset();  // gives the consumer slot up
}

int64_t ns_of(int64_t origin_ns, double ms) {
  return origin_ns + static_cast<int64_t>(std::llround(ms * 1e6));
}

constexpr int32_t status(hotspan::Status s) { return static_cast<int32_t>(s); }

// W3C: at most 512 characters of tracestate are propagated (as the addon keeps them).
constexpr size_t kMaxTracestate = 512;

// Takes an hs_alloc buffer over as a string.
// A null buffer is the empty string.
std::string take_string(uint8_t* text, uint32_t size) {
  if (text == nullptr) return {};
  std::string s(reinterpret_cast<const char*>(text), size);
  std::free(text);
  return s;
}

// A given context (the addon's trace_context.cc ArgGiven): the trace, the
// parent's wire id, flags and tracestate; the core stores it only for a
// valid trace.
hotspan::StoredContext context_of(uint64_t trace_hi, uint64_t trace_lo, uint64_t parent_wire, uint32_t flags,
                                  std::string tracestate) {
  hotspan::StoredContext c;
  c.trace = hotspan::TraceId{trace_hi, trace_lo};
  c.parent_wire = parent_wire;
  c.flags = static_cast<uint8_t>(flags);
  if (tracestate.size() <= kMaxTracestate) c.tracestate = std::move(tracestate);
  return c;
}

}  // namespace

extern "C" {

uint32_t hs_rec_open(double memory_limit, uint32_t on_full, int64_t origin_ns, uint64_t id_salt, uint64_t sampler,
                     uint64_t keep) {
  if (on_full > static_cast<uint32_t>(hotspan::FullPolicy::kDrop)) return 0;
  hotspan::TracerOptions o;
  o.time_unit = hotspan::TimeUnit::kNs;
  o.origin_ns = origin_ns;
  // A double past size_t (32 bits here) would not convert: the core's bounds first.
  const double max = static_cast<double>(hotspan::memory_limit::kMax);
  o.memory_limit = !(memory_limit > 0) ? 0 : memory_limit >= max ? hotspan::memory_limit::kMax
                                                                  : static_cast<size_t>(memory_limit);
  o.on_full = static_cast<hotspan::FullPolicy>(on_full);
  o.id_salt = id_salt;
  o.sampler = sampler;
  o.keep = keep;
  return add(hotspan::Tracer::create(o));
}

void hs_rec_close(uint32_t tracer) {
  if (hotspan::Tracer* t = at<hotspan::Tracer>(tracer)) t->close();
}

void hs_rec_free(uint32_t tracer) {
  auto& t = table<hotspan::Tracer>();
  if (tracer >= 1 && tracer <= t.size() && t[tracer - 1]) {
    close_export(tracer);
    if (tracer <= process_names().size()) process_names()[tracer - 1].clear();
    if (tracer <= keep_names().size()) keep_names()[tracer - 1].clear();
    t[tracer - 1]->close();
    t[tracer - 1].reset();
  }
}

uint32_t hs_rec_thread(uint32_t tracer, uint32_t timeline, uint8_t* name, uint32_t size) {
  const std::string display = take_string(name, size);
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  if (t == nullptr || t->closed()) return 0;
  std::shared_ptr<hotspan::ThreadState> state = t->attach_js_thread(display, timeline);
  if (!state) return 0;
  return add(std::make_shared<Thread>(Thread{std::move(state), t->origin_ns(), t->id_salt(), t->sampler()}));
}

uint32_t hs_rec_first_joined_timeline() { return hotspan::kFirstJoinedTimeline; }

int32_t hs_rec_detach(uint32_t tracer, uint32_t thread, double now_ms) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  Thread* th = at<Thread>(thread);
  if (t == nullptr || th == nullptr) return status(hotspan::Status::kInvalid);
  t->detach_thread(*th->state, ns_of(th->origin_ns, now_ms));
  table<Thread>()[thread - 1].reset();
  return status(hotspan::Status::kOk);
}

uint32_t hs_rec_intern(uint32_t tracer, uint8_t* name, uint32_t size) {
  const std::string text = take_string(name, size);
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  return t == nullptr ? UINT32_MAX : t->intern(text);
}

int32_t hs_rec_begin(uint32_t thread, uint32_t name, double now_ms) {
  Thread* th = at<Thread>(thread);
  if (th == nullptr) return status(hotspan::Status::kInvalid);
  return status(hotspan::begin(*th->state, name, ns_of(th->origin_ns, now_ms)));
}

int32_t hs_rec_begin_attrs(uint32_t thread, uint32_t name, double now_ms, uint8_t* attrs, uint32_t size) {
  const std::string text = take_string(attrs, size);
  Thread* th = at<Thread>(thread);
  if (th == nullptr) return status(hotspan::Status::kInvalid);
  return status(hotspan::begin_with_attrs(*th->state, name, ns_of(th->origin_ns, now_ms), text));
}

int32_t hs_rec_begin_context(uint32_t thread, uint32_t name, double now_ms, uint8_t* attrs, uint32_t size,
                             uint64_t trace_hi, uint64_t trace_lo, uint64_t parent_wire, uint64_t parent_span,
                             uint32_t flags, uint8_t* tracestate, uint32_t tracestate_size) {
  std::string text = take_string(attrs, size);
  const hotspan::StoredContext c =
      context_of(trace_hi, trace_lo, parent_wire, flags, take_string(tracestate, tracestate_size));
  Thread* th = at<Thread>(thread);
  if (th == nullptr) return status(hotspan::Status::kInvalid);
  return status(hotspan::begin_in_context(*th->state, name, ns_of(th->origin_ns, now_ms), std::move(text), &c,
                                          parent_span));
}

int32_t hs_rec_open_ids(uint32_t thread, uint64_t* out) {
  Thread* th = at<Thread>(thread);
  if (th == nullptr) return status(hotspan::Status::kInvalid);
  const hotspan::SpanIds ids = hotspan::open_span_ids(*th->state, th->salt, th->sampler);
  const uint32_t local = hotspan::innermost_local(*th->state);
  out[0] = ids.trace.hi;
  out[1] = ids.trace.lo;
  out[2] = ids.span;
  out[3] = ids.parent;
  out[4] = ids.flags | (ids.resolved ? 0x100u : 0u);
  out[5] = local == 0 ? 0 : hotspan::make_span_id(hotspan::timeline_id(*th->state), local);
  return status(hotspan::Status::kOk);
}

uint32_t hs_rec_depth(uint32_t thread) {
  Thread* th = at<Thread>(thread);
  return th == nullptr ? 0 : static_cast<uint32_t>(hotspan::open_depth(*th->state));
}

uint32_t hs_rec_innermost(uint32_t thread) {
  Thread* th = at<Thread>(thread);
  return th == nullptr ? 0 : hotspan::innermost_local(*th->state);
}

int32_t hs_rec_end(uint32_t thread, double now_ms, uint32_t flags) {
  Thread* th = at<Thread>(thread);
  if (th == nullptr) return status(hotspan::Status::kInvalid);
  return status(hotspan::end(*th->state, ns_of(th->origin_ns, now_ms), static_cast<uint16_t>(flags)));
}

uint32_t hs_rec_track(uint32_t tracer, uint8_t* name, uint32_t size, uint32_t serial) {
  const std::string text = take_string(name, size);
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  return t == nullptr ? 0 : t->track(text, serial != 0);
}

uint32_t hs_rec_track_at(uint32_t tracer, uint8_t* name, uint32_t size, uint32_t serial, uint32_t id) {
  const std::string text = take_string(name, size);
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  return t == nullptr ? 0 : t->track(text, serial != 0, false, id);
}

int32_t hs_rec_async_next_local(uint32_t tracer, uint32_t track, uint32_t local) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  return t == nullptr ? status(hotspan::Status::kInvalid) : status(t->set_next_async_local(track, local));
}

uint32_t hs_rec_groups_at(uint32_t tracer, uint32_t id) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  if (t == nullptr) return 0;
  std::shared_ptr<hotspan::GroupTrack> g = t->group_track(true, id);
  return g ? g->timeline().id() : 0;
}

uint64_t hs_rec_async_begin(uint32_t tracer, uint32_t track, uint32_t name, double now_ms, uint8_t* attrs,
                            uint32_t size) {
  const std::string text = take_string(attrs, size);
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  return t == nullptr ? 0 : t->async_begin(track, name, ns_of(t->origin_ns(), now_ms), text);
}

uint64_t hs_rec_async_begin_context(uint32_t tracer, uint32_t track, uint32_t name, double now_ms, uint8_t* attrs,
                                    uint32_t size, uint64_t trace_hi, uint64_t trace_lo, uint64_t parent_wire,
                                    uint64_t parent_span, uint32_t flags, uint8_t* tracestate,
                                    uint32_t tracestate_size) {
  const std::string text = take_string(attrs, size);
  const hotspan::StoredContext c =
      context_of(trace_hi, trace_lo, parent_wire, flags, take_string(tracestate, tracestate_size));
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  return t == nullptr ? 0
                      : t->async_begin(track, name, ns_of(t->origin_ns(), now_ms), text, parent_span, nullptr, &c);
}

int32_t hs_rec_async_finish(uint32_t tracer, uint64_t token, double now_ms, uint32_t flags, double start_ms,
                            double end_ms, uint32_t name, uint32_t has_attrs, uint8_t* attrs, uint32_t size) {
  hotspan::AsyncEndChanges changes;
  changes.attrs_json = take_string(attrs, size);
  changes.has_attrs = has_attrs != 0;
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  if (t == nullptr) return status(hotspan::Status::kInvalid);
  changes.has_start = std::isfinite(start_ms);
  if (changes.has_start) changes.start_ns = ns_of(t->origin_ns(), start_ms);
  changes.has_end = std::isfinite(end_ms);
  if (changes.has_end) changes.end_ns = ns_of(t->origin_ns(), end_ms);
  changes.name = name;
  return status(t->async_end(token, ns_of(t->origin_ns(), now_ms), static_cast<uint16_t>(flags), std::move(changes)));
}

int32_t hs_rec_async_end(uint32_t tracer, uint64_t token, double now_ms, uint32_t flags) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  if (t == nullptr) return status(hotspan::Status::kInvalid);
  return status(t->async_end(token, ns_of(t->origin_ns(), now_ms), static_cast<uint16_t>(flags)));
}

int32_t hs_rec_open_async(uint32_t tracer) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  std::string& out = hotspan::wasm::result();
  out.clear();
  if (t == nullptr) return status(hotspan::Status::kInvalid);
  for (const auto& [token, name] : t->open_async_spans()) {
    const double pair[2] = {static_cast<double>(token), static_cast<double>(name)};
    out.append(reinterpret_cast<const char*>(pair), sizeof pair);
  }
  return status(hotspan::Status::kOk);
}

int32_t hs_rec_group_begin(uint32_t tracer, uint32_t name, double now_ms, uint8_t* attrs, uint32_t size) {
  std::string text = take_string(attrs, size);
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  if (t == nullptr) return status(hotspan::Status::kInvalid);
  return status(t->group_begin(name, ns_of(t->origin_ns(), now_ms), std::move(text)));
}

uint32_t hs_rec_open_groups(uint32_t tracer) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  return t == nullptr ? 0 : static_cast<uint32_t>(t->open_groups());
}

int32_t hs_rec_counter(uint32_t tracer, uint8_t* name, uint32_t size, double now_ms, double value) {
  const std::string text = take_string(name, size);
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  if (t == nullptr) return status(hotspan::Status::kInvalid);
  return status(t->counter(text, ns_of(t->origin_ns(), now_ms), value));
}

int32_t hs_rec_group_end(uint32_t tracer, double now_ms) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  if (t == nullptr) return status(hotspan::Status::kInvalid);
  return status(t->group_end(ns_of(t->origin_ns(), now_ms)));
}

int32_t hs_rec_counts(uint32_t tracer, double* out) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  if (t == nullptr) return status(hotspan::Status::kInvalid);
  t->flush();
  hotspan::RecordCounts sum;
  for (const hotspan::TimelineCounts& tl : t->counts()) sum += tl.counts;
  out[0] = static_cast<double>(sum.produced);
  out[1] = static_cast<double>(sum.kept);
  out[2] = static_cast<double>(sum.released);
  out[3] = static_cast<double>(sum.overwritten);
  out[4] = static_cast<double>(sum.dropped);
  return status(hotspan::Status::kOk);
}

int32_t hs_rec_timelines(uint32_t tracer) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  std::string& out = hotspan::wasm::result();
  out.clear();
  if (t == nullptr) return status(hotspan::Status::kInvalid);
  t->flush();
  const std::vector<hotspan::TimelineCounts> all = t->counts();
  const uint32_t head[2] = {static_cast<uint32_t>(all.size()), 0};
  out.append(reinterpret_cast<const char*>(head), sizeof head);
  for (const hotspan::TimelineCounts& tl : all) {
    const hotspan::RecordCounts& c = tl.counts;
    const double row[6] = {static_cast<double>(tl.id),         static_cast<double>(c.produced),
                           static_cast<double>(c.kept),        static_cast<double>(c.released),
                           static_cast<double>(c.overwritten), static_cast<double>(c.dropped)};
    out.append(reinterpret_cast<const char*>(row), sizeof row);
  }
  uint32_t end = 0;
  for (const hotspan::TimelineCounts& tl : all) {
    end += static_cast<uint32_t>(tl.name.size());
    out.append(reinterpret_cast<const char*>(&end), sizeof end);
  }
  for (const hotspan::TimelineCounts& tl : all) out += tl.name;
  return status(hotspan::Status::kOk);
}

// ---- joined threads: each records in an instance of its own and hands its
// finished records over to the tracer's instance (read/handover_batch.h) ----

uint32_t hs_rec_handover_open(uint32_t tracer) {
  auto& tracers = table<hotspan::Tracer>();
  if (tracer < 1 || tracer > tracers.size() || !tracers[tracer - 1]) return 0;
  std::shared_ptr<hotspan::HandoverSource> source = hotspan::HandoverSource::open(tracers[tracer - 1]);
  return source ? add(std::move(source)) : 0;
}

uint32_t hs_rec_handover_take(uint32_t source, uint32_t max_records) {
  std::string& out = hotspan::wasm::result();
  out.clear();
  hotspan::HandoverSource* s = at<hotspan::HandoverSource>(source);
  return s == nullptr ? 0 : static_cast<uint32_t>(s->take(out, max_records));
}

int32_t hs_rec_handover_strip(uint8_t* batch, uint32_t size) {
  std::string& out = hotspan::wasm::result();
  out = take_string(batch, size);
  return status(hotspan::strip_records(out));
}

void hs_rec_handover_free(uint32_t source) {
  if (at<hotspan::HandoverSource>(source) != nullptr) table<hotspan::HandoverSource>()[source - 1].reset();
}

uint32_t hs_rec_import_thread(uint32_t tracer, uint32_t timeline, uint8_t* name, uint32_t size) {
  const std::string display = take_string(name, size);
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  if (t == nullptr) return 0;
  std::shared_ptr<hotspan::ImportedThread> imported = t->import_thread(display, timeline);
  return imported ? add(std::move(imported)) : 0;
}

int32_t hs_rec_import(uint32_t imported, uint8_t* batch, uint32_t size) {
  const std::string bytes = take_string(batch, size);
  hotspan::ImportedThread* into = at<hotspan::ImportedThread>(imported);
  if (into == nullptr) return status(hotspan::Status::kInvalid);
  uint64_t stored = 0;
  return status(hotspan::import_batch(*into, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &stored));
}

int32_t hs_rec_import_exited(uint32_t imported) {
  hotspan::ImportedThread* into = at<hotspan::ImportedThread>(imported);
  if (into == nullptr) return status(hotspan::Status::kInvalid);
  into->mark_exited();
  table<hotspan::ImportedThread>()[imported - 1].reset();
  return status(hotspan::Status::kOk);
}

int32_t hs_rec_snapshot(uint32_t tracer) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  hotspan::wasm::result().clear();
  if (t == nullptr) return status(hotspan::Status::kInvalid);
  t->flush();
  hotspan::wasm::encode_columns(t->freeze(), t->origin_ns(), hotspan::wasm::result());
  return status(hotspan::Status::kOk);
}

int32_t hs_rec_write(uint32_t tracer, uint32_t format, int64_t monotonic_ns, int64_t realtime_ns,
                     int64_t boottime_ns) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  std::string& out = hotspan::wasm::result();
  out.clear();
  if (t == nullptr) return kBadHandle;
  if (format != kChromeJson && format != kPerfetto) return kBadFormat;
  t->flush();
  const hotspan::FrozenSnapshot snap = t->freeze();
  hotspan::DocumentInfo doc =
      hotspan::document_of(snap, t->origin_ns(), {monotonic_ns, realtime_ns, boottime_ns});
  if (tracer <= process_names().size() && !process_names()[tracer - 1].empty()) {
    doc.process_name = process_names()[tracer - 1];
  }
  static const std::vector<std::string> kNoNames;
  const std::vector<std::string>& names = tracer <= keep_names().size() ? keep_names()[tracer - 1] : kNoNames;
  double written = 0;
  if (hotspan::TraceKeep::samples(t->sampler(), t->keep(), names)) {
    // A sampling tracer's write: the kept traces only (read/trace_keep.h), as the addon's.
    uint64_t left_out = 0;
    const hotspan::Snapshot kept = hotspan::kept_snapshot(snap, t->id_salt(), t->sampler(), t->keep(), names, &left_out);
    doc.counts.values.emplace_back("sampled_out", left_out);
    for (const auto& tl : kept.timelines) written += static_cast<double>(tl.records.size());
    if (format == kChromeJson) {
      hotspan::write_chrome_json(kept, doc, out);
    } else {
      hotspan::write_perfetto(kept, doc, out);
    }
  } else {
    for (const auto& tl : snap.timelines) written += static_cast<double>(tl.records.size());
    if (format == kChromeJson) {
      hotspan::write_chrome_json(snap, doc, out);
    } else {
      hotspan::write_perfetto(snap, doc, out);
    }
  }
  written_records() = written;
  return kOk;
}

int32_t hs_rec_keep_name(uint32_t tracer, uint8_t* name, uint32_t size) {
  std::string given = take_string(name, size);
  if (at<hotspan::Tracer>(tracer) == nullptr || given.empty()) return status(hotspan::Status::kInvalid);
  auto& n = keep_names();
  if (n.size() < tracer) n.resize(tracer);
  n[tracer - 1].push_back(std::move(given));
  return status(hotspan::Status::kOk);
}

double hs_rec_written() { return written_records(); }

int32_t hs_rec_process_name(uint32_t tracer, uint8_t* name, uint32_t size) {
  std::string given = take_string(name, size);
  if (at<hotspan::Tracer>(tracer) == nullptr || given.empty() || given.size() > kMaxProcessName) {
    return status(hotspan::Status::kInvalid);
  }
  auto& n = process_names();
  if (n.size() < tracer) n.resize(tracer);
  n[tracer - 1] = std::move(given);
  return status(hotspan::Status::kOk);
}

int32_t hs_rec_export_open(uint32_t tracer) {
  auto& t = table<hotspan::Tracer>();
  if (tracer < 1 || tracer > t.size() || !t[tracer - 1]) return status(hotspan::Status::kInvalid);
  auto& c = export_cursors();
  if (c.size() < tracer) c.resize(tracer);
  if (c[tracer - 1] != nullptr) return status(hotspan::Status::kInvalid);
  c[tracer - 1] = hotspan::ExportCursor::open(t[tracer - 1]);
  return status(c[tracer - 1] == nullptr ? hotspan::Status::kInvalid : hotspan::Status::kOk);
}

int32_t hs_rec_export_take(uint32_t tracer, double max_records, double* out) {
  hotspan::Tracer* t = at<hotspan::Tracer>(tracer);
  hotspan::ExportCursor* c = export_cursor(tracer);
  std::string& result = hotspan::wasm::result();
  result.clear();
  if (t == nullptr || c == nullptr) return status(hotspan::Status::kInvalid);
  t->flush();
  hotspan::FrozenSnapshot batch;
  const uint64_t max = !(max_records > 0) ? 0 : max_records >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(max_records);
  if (max > 0) c->records().next(batch, max);
  uint64_t lost = 0;
  const uint64_t left = c->count_lost(lost);
  hotspan::wasm::encode_columns(batch, t->origin_ns(), result);
  out[0] = static_cast<double>(lost);
  out[1] = static_cast<double>(left);
  const int64_t through = c->records().read_through_ns();
  out[2] = through == INT64_MAX   ? std::numeric_limits<double>::infinity()
           : through == INT64_MIN ? -std::numeric_limits<double>::infinity()
                                  : hotspan::clock::to_ms(through, t->origin_ns());
  return status(hotspan::Status::kOk);
}

void hs_rec_export_close(uint32_t tracer) { close_export(tracer); }

}  // extern "C"
