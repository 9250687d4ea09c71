// A frozen snapshot held for JS (NativeTracer.freeze()): the records a query
// or a bounded read goes back to, read in place and consistent across calls.
// It keeps the timelines it froze alive (FrozenRecords pins them) until JS
// drops the object. A type-tagged JS object wraps it.
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "read/snapshot_query.h"
#include "record/span_ids.h"
#include "record/tracer.h"

namespace hotspan_addon {

struct FrozenView {
  FrozenView(hotspan::FrozenSnapshot frozen, int64_t origin);
  FrozenView(const FrozenView&) = delete;
  FrozenView& operator=(const FrozenView&) = delete;

  // What a record's columns need from its timeline beyond the record.
  struct Lookups {
    std::unordered_map<uint32_t, uint64_t> foreign;            // local id -> parent span id
    std::unordered_map<uint32_t, const std::string*> attrs;    // local id -> JSON text
  };
  // Timeline t's lookups, built on first use.
  const Lookups& lookups(size_t t);
  // The records' W3C ids under `salt` (span_ids.h), resolved on first use:
  // NativeTracer.spanIds and spanTracestates, which the OTel adapter calls
  // on one view, share one resolve.
  const std::vector<std::vector<hotspan::SpanIds>>& span_ids(uint64_t salt, uint64_t sampler = 0);

  const hotspan::FrozenSnapshot snapshot;
  const int64_t origin_ns;
  const hotspan::SnapshotQuery<hotspan::FrozenSnapshot> query;

 private:
  std::vector<std::unique_ptr<Lookups>> lookups_;
  std::vector<std::vector<hotspan::SpanIds>> ids_;
  uint64_t ids_salt_ = 0;
  bool ids_resolved_ = false;
};

// A new JS object holding a view of `tracer`'s committed records now; its
// `count` property is the number of records.
Napi::Object NewFrozenView(Napi::Env env, const hotspan::Tracer& tracer);
// The view argument `index` of a method, or a TypeError naming it.
FrozenView& ArgFrozenView(const Napi::CallbackInfo& info, size_t index, const char* arg);

}  // namespace hotspan_addon
