// The implementation side of native/include/hotspan.h.
#pragma once

#include <memory>

#include "hotspan.h"
#include "record/tracer.h"

namespace hotspan {

// The table for `tracer`. The table and its small context are never freed
// (a consumer may call through it at any time); they hold only a weak
// reference to the tracer, so closing or destroying it makes every entry point
// return HOTSPAN_CLOSED. Idempotent per tracer.
const hotspan_api_v1* c_api_for(const std::shared_ptr<Tracer>& tracer);

}  // namespace hotspan
