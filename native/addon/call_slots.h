// The per-span entry points (span_calls.h) without a Node-API call on their
// common forms. end() takes no argument, and the staged begin reads its
// name id from ThreadState::begin_name, which the facade writes through the
// state view just before the call; all either needs is its binding's
// ThreadState, and reading the data pointer for that costs a
// napi_get_cb_info per call (with the argument, also a
// napi_get_value_uint32). Instead a binding takes one of kSlots sets of
// functions, each compiled to read its own entry of a process-wide table.
// asyncBegin() and asyncEnd() take their numbers from the async view
// (async_args.h) and the slot view, so they too need only their binding:
// they get slot functions of the same kind. Only a tag in that memory sends
// a call to span_calls.cc's argument forms.
// A binding belongs to one env thread and only that thread calls its
// functions; a slot is released when the binding is deleted, which happens
// after every function of it was collected. Past kSlots live bindings, they
// are span_calls::Begin etc. (data pointer) again.
#pragma once

#include <node_api.h>

#include <cstddef>

#include "record/thread_state.h"

namespace hotspan_addon {
struct TracerBinding;
}

namespace hotspan_addon::call_slots {

constexpr size_t kSlots = 64;
constexpr size_t kNone = static_cast<size_t>(-1);

// The per-span entry points of span_calls.h, for the slot's binding.
struct Functions {
  napi_callback begin;        // span_calls::Begin: the staged form inline
  napi_callback end;          // span_calls::End: the plain form inline
  napi_callback async_begin;  // span_calls::AsyncBegin
  napi_callback async_end;    // span_calls::AsyncEnd
};

// A free slot set to `binding` (and its thread), or kNone. *fns gets the
// slot's functions.
size_t Acquire(TracerBinding* binding, Functions* fns);
void Release(size_t slot);  // kNone: nothing

}  // namespace hotspan_addon::call_slots
