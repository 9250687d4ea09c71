// The attribute encoder and the writers' JSON/UTF-8 scanners: the whole input
// is one attribute text (what the binding hands the core, unchecked), put on
// a thread span, an async span and a group; both outputs must decode.
#include <cstddef>
#include <cstdint>
#include <string>

#include "record/tracer.h"
#include "write_outputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string attrs(reinterpret_cast<const char*>(data), size);
  auto tracer = hotspan::Tracer::create();
  auto thread = tracer->attach_js_thread("js");
  const uint32_t name = tracer->intern("span");
  hotspan::begin_with_attrs(*thread, name, 1000, attrs);
  hotspan::end(*thread, 2000);
  const uint32_t track = tracer->track("track", false);
  hotspan::end(*thread, 2500);  // nothing open: changes nothing
  const uint64_t token = tracer->async_begin(track, name, 3000, attrs);
  tracer->async_end(token, 4000);
  tracer->group_begin(name, 5000, attrs);
  tracer->group_end(6000);
  tracer->flush();
  hotspan_fuzz::write_and_check(*tracer, "attrs_fuzz");
  return 0;
}
