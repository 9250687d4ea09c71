// In-process checks that a writer's output decodes, for the fuzz targets:
// Chrome JSON must be one strict RFC 8259 value in valid UTF-8 (what
// JSON.parse over a fatal TextDecoder accepts), and Perfetto protobuf must be
// well-formed wire format whose string fields (of the messages hotspan
// writes, numbered as in perfetto_trace.proto) are valid UTF-8. The seed
// corpus outputs are also decoded by the real consumers (check_outputs.cjs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hotspan_fuzz {

// Empty when `json` is valid, else what is wrong and where.
std::string json_problem(const std::string& json);
// Empty when `pb` is a well-formed perfetto.protos.Trace, else the problem.
std::string perfetto_problem(const std::string& pb);

}  // namespace hotspan_fuzz
