// The process-wide table behind `shareToken()` / `join(token)`: token ->
// weak reference to the tracer. The only process-wide state of the addon; it
// never keeps a tracer alive.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "record/tracer.h"

namespace hotspan_addon::shared_tracers {

// The tracer's token; the same string on every call for one tracer.
std::string TokenFor(const std::shared_ptr<hotspan::Tracer>& tracer);

// The live tracer for `token`, or nullptr (unknown token or tracer destroyed).
std::shared_ptr<hotspan::Tracer> Find(const std::string& token);

// The sampling interval (us) of the CPU profile the tracer's owner runs on
// every env joined to it (lib/tracer/cpu-profile.ts), 0 when none runs:
// set by the owner, read by each joined env. Per tracer, beside its token.
int32_t ProfileInterval(const std::shared_ptr<hotspan::Tracer>& tracer);
void SetProfileInterval(const std::shared_ptr<hotspan::Tracer>& tracer, int32_t interval_us);

}  // namespace hotspan_addon::shared_tracers
