// One committed span as a snapshot hands it out, 32 bytes (a timeline stores
// it in 28: see stored_span.h). The timeline is implied by where the record
// is, and the tracer-wide span id is (timeline id << 32) | local id, so
// neither is kept per record.
#pragma once

#include <cstdint>

namespace hotspan {

// <generated from schema/boundary.json by scripts/gen-boundary.mjs (npm run gen)>
enum SpanFlags : uint16_t {
  kFlagAsync = 1u << 0,  // async span (lives on an async track)
  kFlagAbandoned = 1u << 1,  // ended by cleanup, not by the caller
  kFlagError = 1u << 2,  // the traced function threw / the promise rejected
  kFlagAttrs = 1u << 3,  // has an attribute blob (see Timeline::attrs)
  kFlagParentElsewhere = 1u << 4,  // parent lives on another timeline (async), or is given (foreign_parents)
  kFlagContext = 1u << 5,  // carries a stored trace context (see Timeline::add_context)
};

// The NativeSnapshot `fields` column (the addon writes it; the js backend
// and the WebAssembly core read it): these uint32 fields per record.
enum RecordField : uint32_t {
  kFieldName = 0,  // the span's name id
  kFieldTimeline = 1,  // the id of the timeline that holds it
  kFieldLocal = 2,  // its local id on that timeline
  kFieldParentTimeline = 3,  // its parent's timeline (0: no parent)
  kFieldParentLocal = 4,  // its parent's local id
  kFieldDepthFlags = 5,  // depth << 16 | span flags
  kFieldsPerRecord = 6,
};
// </generated>

struct SpanRecord {
  // Always CLOCK_MONOTONIC ns (a ticks timeline's are converted by its
  // anchors), or the caller's own ns on a timeline of caller-chosen times.
  int64_t start_ns;
  int64_t end_ns;
  uint32_t local_id;      // 1-based, unique within the timeline
  uint32_t parent_local;  // parent's local id (same timeline unless kFlagParentElsewhere); 0: none
  uint32_t name;          // name table id
  uint16_t depth;         // 0 for a root span
  uint16_t flags;         // SpanFlags
};
static_assert(sizeof(SpanRecord) == 32, "records are 32 bytes");

inline uint64_t make_span_id(uint32_t timeline, uint32_t local) {
  return (static_cast<uint64_t>(timeline) << 32) | local;
}

}  // namespace hotspan
