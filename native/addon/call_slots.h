// begin() and end() without a Node-API call. end() takes no argument, and
// the staged begin reads its name id from ThreadState::begin_name, which the
// facade writes through the state view just before the call; all either
// needs is its binding's ThreadState, and reading the data pointer for that
// costs a napi_get_cb_info per call (with the argument, also a
// napi_get_value_uint32). Instead a binding takes one of kSlots sets of
// functions, each compiled to read its own entry of a process-wide table.
// The attribute begin (slots::BeginView) takes the same route: its slot
// function reads the binding from the table, not through napi_get_cb_info.
// asyncBeginView(), asyncBeginValuesView() and asyncEndView() take their
// numbers from the async view (async_args.h) and the slot view, so they too
// need only their binding: they get slot functions of the same kind.
// A binding belongs to one env thread and only that thread calls its
// functions; a slot is released when the binding is deleted, which happens
// after every function of it was collected. Past kSlots live bindings, they
// are hot::BeginStaged, hot::End and slots::BeginView (data pointer) again.
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

struct Functions {
  napi_callback begin_staged;  // () -> status, the name id from begin_name
  napi_callback end;           // () -> status
  napi_callback begin_view;    // () -> as slots::BeginView
  napi_callback async_begin;   // hot::AsyncBeginView of the slot's binding
  napi_callback async_end;     // hot::AsyncEndView of the slot's binding
  napi_callback async_begin_values;  // slots::AsyncBeginValuesView of the slot's binding
};

// A free slot set to `binding` (and its thread), or kNone. *fns gets the
// slot's functions.
size_t Acquire(TracerBinding* binding, Functions* fns);
void Release(size_t slot);  // kNone: nothing

}  // namespace hotspan_addon::call_slots
