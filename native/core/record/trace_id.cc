#include "record/trace_id.h"

#include <random>

namespace hotspan::trace_id {

uint64_t random_salt() {
  std::random_device rd;
  uint64_t s = 0;
  while (s == 0) s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return s;
}

}  // namespace hotspan::trace_id
