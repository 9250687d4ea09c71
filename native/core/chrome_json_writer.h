// Chrome Trace Event JSON (the object form) from a snapshot.
#pragma once

#include <cstdint>
#include <string>

#include "block_sink.h"
#include "tracer.h"

namespace hotspan {

// Appends the whole document to `out`. Times are converted to microseconds on
// the performance.now() axis with origin_ns.
void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, std::string& out);
// The same bytes, streamed to `sink` in blocks.
void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, BlockSink& sink);
// The same from records read in place (Tracer::freeze).
void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, std::string& out);
void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, BlockSink& sink);

}  // namespace hotspan
