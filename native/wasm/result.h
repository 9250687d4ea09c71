// The module's one result buffer: what the last call made, read through
// hs_result_data / hs_result_size until the next call (exports.cc).
#pragma once

#include <string>

namespace hotspan::wasm {

std::string& result();

}  // namespace hotspan::wasm
