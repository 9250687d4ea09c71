// end() without a Node-API call. end() takes no argument; all it needs is
// its binding's ThreadState, and reading the data pointer for that costs a
// napi_get_cb_info per span. Instead a binding takes one of kSlots end
// functions, each compiled to read its own entry of a process-wide table.
// A binding belongs to one env thread and only that thread calls its
// functions; a slot is released when the binding is deleted, which happens
// after every function of it was collected. Past kSlots live bindings, end()
// is hot::End (data pointer) again.
#pragma once

#include <node_api.h>

#include <cstddef>

#include "thread_state.h"

namespace hotspan_addon::end_slots {

constexpr size_t kSlots = 64;
constexpr size_t kNone = static_cast<size_t>(-1);

// A free slot set to `thread`, or kNone. *end gets the slot's function.
size_t Acquire(hotspan::ThreadState* thread, napi_callback* end);
void Release(size_t slot);  // kNone: nothing

}  // namespace hotspan_addon::end_slots
