// The process-wide table behind `shareToken()` / `join(token)`: token ->
// weak reference to the tracer. The only process-wide state of the addon; it
// never keeps a tracer alive.
#pragma once

#include <memory>
#include <string>

#include "record/tracer.h"

namespace hotspan_addon::shared_tracers {

// The tracer's token; the same string on every call for one tracer.
std::string TokenFor(const std::shared_ptr<hotspan::Tracer>& tracer);

// The live tracer for `token`, or nullptr (unknown token or tracer destroyed).
std::shared_ptr<hotspan::Tracer> Find(const std::string& token);

}  // namespace hotspan_addon::shared_tracers
