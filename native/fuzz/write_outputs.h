// The one place the fuzz targets call the writers: both formats of a tracer's
// committed records, whole and streamed in small blocks (the two must agree),
// each checked to decode (output_check.h). A failed check aborts: a finding.
// With HOTSPAN_FUZZ_OUT=<dir> (replay runs only) the documents are also kept
// there for the real consumers (check_outputs.cjs).
#pragma once

#include "record/tracer.h"

namespace hotspan_fuzz {

void write_and_check(const hotspan::Tracer& tracer, const char* target);

}  // namespace hotspan_fuzz
