// The tracer object's per-span entry points: begin, end, asyncBegin and
// asyncEnd, each one function over every argument form of its call. This
// file and span_calls.cc are the one place that decodes those forms.
//
// The common forms take no argument: their numbers are in memory the
// facade writes just before the call (the state view's begin_name, the slot
// view, the async view), and their call_slots functions make no Node-API
// call at all, not even napi_get_cb_info. So an entry decides its form in
// three steps, cheapest first:
//   1. a tag word in that memory (free: the common form loads it anyway):
//      begin_name (begin, end), the async view's kLocal (asyncBegin) and
//      kToken (asyncEnd). Only the tag kArgs makes the entry read its
//      arguments; the facade writes it right before an argument form's call,
//      and where the memory is not lent to JS (external buffers refused) the
//      tag stays kArgs for good.
//   2. argc (napi_get_cb_info with a fixed-size argv);
//   3. napi_typeof of one argument, only where argc is ambiguous.
//
// The forms (and the facade's calls, lib/backends/native-backend.ts):
//   begin()   begin_name = name id               staged: that name
//             begin_name = kNameView             slot view: name, code, values
//             begin_name = kNameArgs, then
//               (nameId)                         argc 1
//               (nameId, code, v0 .. v3)         argv[1] a number: slot values
//               (nameId, attrsJson)              argc 2, argv[1] not a number
//               (nameId, attrsJson, ids, flags, tracestate)  argc >= 3: under a context
//   end()     begin_name != kNameArgs            plain
//             begin_name = kNameArgs, then () | (flags) | (depth, flags) by argc
//   asyncBegin()  kLocal >= -1 (the last answer) async view: track, name
//                 kLocal = kLocalValues          + the slot view's code and values
//                 kLocal = kLocalArgs, then
//                   (track, nameId[, attrsJson]) argc <= 2, or argv[2] not a number
//                   (track, nameId, code[, v0 .. v3])  argv[2] a number
//                   (track, nameId, attrsJson, ids, flags, tracestate)  argc >= 4
//   asyncEnd()    kToken != kTokenArgs           async view: token, flags
//                 kToken = kTokenArgs, then
//                   (token[, flags])             argc <= 2
//                   (token, flags, startMs, endMs, nameId[, attrsJson])  argc >= 3: finish
// After an argument form the addon puts a lent tag word back to a plain
// value, so the plain forms that do not write it (end(), asyncBegin()'s
// view form) stay on their path.
#pragma once

#include <node_api.h>

#include <cstdint>

namespace hotspan_addon {
struct TracerBinding;
}

namespace hotspan_addon::span_calls {

// begin_name values that are no name id (the facade sends ids at or above
// kNameArgs as an argument form, which the core refuses as unknown).
constexpr uint32_t kNameArgs = 0xFFFFFFFEu;
constexpr uint32_t kNameView = 0xFFFFFFFFu;
// The async view's kLocal on entry: below every answer (a local id >= 0 or
// kRefused = -1).
constexpr double kLocalValues = -2;
constexpr double kLocalArgs = -3;
// The async view's kToken: no token is negative.
constexpr double kTokenArgs = -1;

// The entry points with the binding as data (when no call_slots slot is free).
napi_value Begin(napi_env env, napi_callback_info info);
napi_value End(napi_env env, napi_callback_info info);
napi_value AsyncBegin(napi_env env, napi_callback_info info);
napi_value AsyncEnd(napi_env env, napi_callback_info info);

// What the call_slots functions call past their inline common form.
// begin with begin_name `tag` (kNameArgs or kNameView).
napi_value BeginTagged(napi_env env, napi_callback_info info, TracerBinding& b, uint32_t tag);
// end with begin_name kNameArgs; `now` read on entry.
napi_value EndArgs(napi_env env, napi_callback_info info, TracerBinding& b, int64_t now);
napi_value AsyncBeginOf(napi_env env, napi_callback_info info, TracerBinding& b);
napi_value AsyncEndOf(napi_env env, napi_callback_info info, TracerBinding& b);

}  // namespace hotspan_addon::span_calls
