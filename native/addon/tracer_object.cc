#include "tracer_object.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "arg_check.h"
#include "record/c_api.h"
#include "record/clock.h"
#include "call_slots.h"
#include "hot_path.h"
#include "frozen_view.h"
#include "write/chrome_json_writer.h"
#include "write/perfetto_writer.h"
#include "read/stats.h"
#include "read/query_call.h"
#include "shared_tracers.h"
#include "span_calls.h"
#include "attr_values.h"
#include "snapshot_convert.h"
#include "stream_object.h"
#include "trace_context.h"
#include "write_file.h"

namespace hotspan_addon {

const napi_type_tag kTracerObjectTag = {0x686f747370616e31ULL, 0x7472616365723a31ULL};

namespace {

// The cold methods live on one prototype per env and find their binding
// through `this` (NewTracerObject wraps it); the hot ones carry it as data.
inline TracerBinding& Self(const Napi::CallbackInfo& info) {
  return BindingOf(info.Env(), info.This());
}

// Indices in the state view (depth is index 0): next_local, begin_name.
constexpr ptrdiff_t kStateLocal = 3;
constexpr ptrdiff_t kStateBeginName = 4;

inline Napi::Number Num(Napi::Env env, double v) { return Napi::Number::New(env, v); }

inline Napi::Number StatusNum(Napi::Env env, hotspan::Status s) {
  return Napi::Number::New(env, static_cast<double>(static_cast<int>(s)));
}

Napi::Value Intern(const Napi::CallbackInfo& info) {
  std::string name = ARG_STRING(0, "name");
  return Num(info.Env(), Self(info).tracer->intern(name));
}

Napi::Value OpenDepth(const Napi::CallbackInfo& info) {
  return Num(info.Env(), static_cast<double>(hotspan::open_depth(*Self(info).thread)));
}

Napi::Value Innermost(const Napi::CallbackInfo& info) {
  return Num(info.Env(), hotspan::innermost_local(*Self(info).thread));
}

void ReleaseState(napi_env, void*, void* hint) {
  delete static_cast<std::shared_ptr<hotspan::ThreadState>*>(hint);
}

// This thread's open-span depth and last local id, read by the facade with
// no call, and the name id (or tag) begin() reads: a Uint32Array over
// ThreadState's depth .. begin_name (the buffer holds the state alive). Only
// this env's thread touches them, the addon only inside calls, so JS reads
// and writes them between calls race-free. undefined when external buffers
// are refused (a V8 sandbox) or the fields moved apart.
Napi::Value StateView(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  TracerBinding& b = Self(info);
  uint32_t* depth = &b.thread->depth;
  if (&b.thread->next_local - depth != kStateLocal || &b.thread->begin_name - depth != kStateBeginName) {
    return info.Env().Undefined();
  }
  auto* hold = new std::shared_ptr<hotspan::ThreadState>(b.state);
  napi_value ab, view;
  if (napi_create_external_arraybuffer(env, depth, (kStateBeginName + 1) * sizeof(uint32_t),
                                       &ReleaseState, hold, &ab) != napi_ok) {
    delete hold;
    napi_value pending;
    napi_get_and_clear_last_exception(env, &pending);
    return info.Env().Undefined();
  }
  NAPI_THROW_IF_FAILED(env, napi_create_typedarray(env, napi_uint32_array, kStateBeginName + 1, ab, 0, &view),
                       Napi::Value());
  // The facade now writes begin_name before each begin (span_calls.h); until
  // then it stays the argument-form tag.
  if (!b.state_lent) b.thread->begin_name = 0;
  b.state_lent = true;
  return Napi::Value(env, view);
}

void SetThreadName(const Napi::CallbackInfo& info) {
  std::string name = ARG_STRING(0, "name");
  TracerBinding& b = Self(info);
  b.tracer->set_thread_name(*b.thread, name);
}

Napi::Value Track(const Napi::CallbackInfo& info) {
  std::string name = ARG_STRING(0, "name");
  bool serial = ARG_BOOL(1, "serial");
  bool as_named = info.Length() > 2 && ARG_BOOL(2, "asNamed");
  return Num(info.Env(), Self(info).tracer->track(name, serial, as_named));
}

Napi::Value OpenAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TracerBinding& b = Self(info);
  std::vector<std::pair<uint64_t, uint32_t>> open = b.tracer->open_async_spans();
  Napi::Array out = Napi::Array::New(env, open.size());
  for (uint32_t i = 0; i < open.size(); ++i) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, Num(env, static_cast<double>(open[i].first)));
    pair.Set(1u, Napi::String::New(env, b.tracer->name_of(open[i].second)));
    out.Set(i, pair);
  }
  return out;
}

Napi::Value GroupBegin(const Napi::CallbackInfo& info) {
  uint32_t name = ARG_UINT32(0, "nameId");
  std::string attrs = ARG_OPT_STRING(1, "attrsJson");
  return StatusNum(info.Env(),
                   Self(info).tracer->group_begin(name, hotspan::clock::now_ticks(), std::move(attrs)));
}

Napi::Value GroupEnd(const Napi::CallbackInfo& info) {
  return StatusNum(info.Env(), Self(info).tracer->group_end(hotspan::clock::now_ticks()));
}

Napi::Value OpenGroups(const Napi::CallbackInfo& info) {
  return Num(info.Env(), static_cast<double>(Self(info).tracer->open_groups()));
}

Napi::Value Counter(const Napi::CallbackInfo& info) {
  std::string name = ARG_STRING(0, "name");
  double value = ARG_NUMBER(1, "value");
  // Counter samples are stored in ns whatever the tracer's unit (tracer.h).
  return StatusNum(info.Env(), Self(info).tracer->counter(name, hotspan::clock::now_ns(), value));
}

// A typed array argument of element type T (napi type `type`), copied.
template <typename T>
std::vector<T> ArgTyped(const Napi::CallbackInfo& info, size_t index, const char* arg, napi_typedarray_type type,
                        const char* expected) {
  Napi::Value v = info[index];
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type) {
    ThrowArgTypeCxx(info.Env(), arg, expected, v);
  }
  Napi::TypedArrayOf<T> a = v.As<Napi::TypedArrayOf<T>>();
  return std::vector<T>(a.Data(), a.Data() + a.ElementLength());
}

std::vector<std::string> ArgStrings(const Napi::CallbackInfo& info, size_t index, const char* arg) {
  Napi::Value v = info[index];
  if (!v.IsArray()) ThrowArgTypeCxx(info.Env(), arg, "an array of strings", v);
  Napi::Array a = v.As<Napi::Array>();
  std::vector<std::string> out(a.Length());
  for (uint32_t i = 0; i < a.Length(); ++i) {
    Napi::Value e = a.Get(i);
    if (!e.IsString()) ThrowArgTypeCxx(info.Env(), arg, "an array of strings", e);
    out[i] = e.As<Napi::String>().Utf8Value();
  }
  return out;
}

// A batch of V8 CPU samples of this env's thread (cpu_profile.h): frames as
// (functions, urls, lines: line and column per frame), the tree as
// (nodeFrame, nodeParent), samples as (sampleNode, sampleUs: CLOCK_MONOTONIC
// us, V8's profile clock). Returns a status (Invalid: tables inconsistent).
Napi::Value CpuProfile(const Napi::CallbackInfo& info) {
  TracerBinding& b = Self(info);
  std::vector<std::string> functions = ArgStrings(info, 0, "functions");
  std::vector<std::string> urls = ArgStrings(info, 1, "urls");
  std::vector<int32_t> lines = ArgTyped<int32_t>(info, 2, "lines", napi_int32_array, "an Int32Array");
  hotspan::CpuProfile prof;
  prof.timeline = hotspan::timeline_id(*b.thread);
  prof.node_frame = ArgTyped<uint32_t>(info, 3, "nodeFrame", napi_uint32_array, "a Uint32Array");
  prof.node_parent = ArgTyped<int32_t>(info, 4, "nodeParent", napi_int32_array, "an Int32Array");
  prof.sample_node = ArgTyped<uint32_t>(info, 5, "sampleNode", napi_uint32_array, "a Uint32Array");
  std::vector<double> us = ArgTyped<double>(info, 6, "sampleUs", napi_float64_array, "a Float64Array");
  if (functions.size() != urls.size() || lines.size() != 2 * functions.size()) {
    return StatusNum(info.Env(), hotspan::Status::kInvalid);
  }
  prof.frames.resize(functions.size());
  for (size_t i = 0; i < functions.size(); ++i) {
    prof.frames[i] = {std::move(functions[i]), std::move(urls[i]), lines[2 * i], lines[2 * i + 1]};
  }
  prof.sample_ns.resize(us.size());
  for (size_t i = 0; i < us.size(); ++i) {
    if (!std::isfinite(us[i])) return StatusNum(info.Env(), hotspan::Status::kInvalid);
    prof.sample_ns[i] = static_cast<int64_t>(std::llround(us[i] * 1000.0));
  }
  return StatusNum(info.Env(), b.tracer->cpu_profile(std::move(prof)));
}

// profileInterval(): the interval (us) of the profile the owner runs on its
// joined envs, 0 for none; profileInterval(us) sets it (an int32 >= 0).
Napi::Value ProfileInterval(const Napi::CallbackInfo& info) {
  const std::shared_ptr<hotspan::Tracer>& tracer = Self(info).tracer;
  if (info.Length() > 0) {
    Napi::Value v = info[0];
    const double us = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
    if (!(us >= 0 && us <= 2147483647.0 && us == std::floor(us))) {
      ThrowArgTypeCxx(info.Env(), "intervalUs", "an integer from 0 to 2147483647", v);
    }
    shared_tracers::SetProfileInterval(tracer, static_cast<int32_t>(us));
  }
  return Napi::Number::New(info.Env(), shared_tracers::ProfileInterval(tracer));
}

void Flush(const Napi::CallbackInfo& info) { Self(info).tracer->flush(); }

Napi::Value Pending(const Napi::CallbackInfo& info) {
  return Num(info.Env(), static_cast<double>(Self(info).tracer->pending()));
}

Napi::Value Snapshot(const Napi::CallbackInfo& info) {
  const hotspan::Tracer& tracer = *Self(info).tracer;
  FrozenView view(tracer.freeze(), tracer.origin_ns());
  Napi::Object out = RecordsToJs(info.Env(), view, 0, view.query.size());
  out.Set("counters", CountersToJs(info.Env(), view));
  return out;
}

Napi::Value Freeze(const Napi::CallbackInfo& info) { return NewFrozenView(info.Env(), *Self(info).tracer); }

// A whole number in [0, max] (the facade checked the user's value; this
// guards the binding itself).
uint64_t ArgIndex(const Napi::CallbackInfo& info, size_t index, const char* arg, uint64_t max) {
  const double d = ARG_NUMBER(index, arg);
  if (!(d >= 0 && d <= static_cast<double>(max)) || std::floor(d) != d) {
    throw Napi::RangeError::New(info.Env(), std::string("hotspan: ") + arg + " must be an integer in [0, " +
                                                std::to_string(max) + "] (got " + std::to_string(d) + ")");
  }
  return static_cast<uint64_t>(d);
}

Napi::Float64Array ArgFloat64Array(const Napi::CallbackInfo& info, size_t index, const char* arg) {
  Napi::Value v = info[index];
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    ThrowArgTypeCxx(info.Env(), arg, "a Float64Array", v);
  }
  return v.As<Napi::Float64Array>();
}

Napi::Value Read(const Napi::CallbackInfo& info) {
  FrozenView& view = ArgFrozenView(info, 0, "view");
  const uint64_t size = view.query.size();
  const uint64_t offset = ArgIndex(info, 1, "offset", size);
  const uint64_t limit = ArgIndex(info, 2, "limit", size - offset);
  return RecordsToJs(info.Env(), view, offset, limit);
}

Napi::Value ReadAt(const Napi::CallbackInfo& info) {
  FrozenView& view = ArgFrozenView(info, 0, "view");
  Napi::Float64Array list = ArgFloat64Array(info, 1, "indices");
  const uint64_t size = view.query.size();
  std::vector<uint64_t> indices(list.ElementLength());
  for (size_t i = 0; i < indices.size(); ++i) {
    const double d = list[i];
    if (!(d >= 0 && d < static_cast<double>(size)) || std::floor(d) != d) {
      throw Napi::RangeError::New(info.Env(), "hotspan: indices[" + std::to_string(i) + "] is not a record index (got " +
                                                  std::to_string(d) + ")");
    }
    indices[i] = static_cast<uint64_t>(d);
  }
  return RecordsToJs(info.Env(), view, indices);
}

Napi::Value Query(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  FrozenView& view = ArgFrozenView(info, 0, "view");
  const bool has_name = !info[1].IsUndefined();
  const std::string name = has_name ? ARG_STRING(1, "name") : std::string();
  Napi::Float64Array args = ArgFloat64Array(info, 2, "args");
  std::vector<double> out;
  if (hotspan::query_call(view.query, args.Data(), args.ElementLength(), has_name, name, out) !=
      hotspan::QueryStatus::kOk) {
    throw Napi::RangeError::New(env, "hotspan: query arguments rejected by the core");
  }
  Napi::Float64Array result = Napi::Float64Array::New(env, out.size());
  std::copy(out.begin(), out.end(), result.Data());
  return result;
}

Napi::Value Stats(const Napi::CallbackInfo& info) {
  const hotspan::Tracer& tracer = *Self(info).tracer;
  return StatsToJs(info.Env(), hotspan::compute_stats(tracer.freeze()), tracer);
}

// { lost, limit, used, policy, timelines: [{ id, name, produced, kept, released, overwritten, dropped }],
//   sampledOut: Tracer::sampled_out() }
Napi::Value Counts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const hotspan::Tracer& tracer = *Self(info).tracer;
  const std::vector<hotspan::TimelineCounts> rows = tracer.counts();
  Napi::Array list = Napi::Array::New(env, rows.size());
  for (uint32_t i = 0; i < rows.size(); ++i) {
    const hotspan::RecordCounts& c = rows[i].counts;
    Napi::Object o = Napi::Object::New(env);
    o.Set("id", Num(env, rows[i].id));
    o.Set("name", Napi::String::New(env, rows[i].name));
    o.Set("produced", Num(env, static_cast<double>(c.produced)));
    o.Set("kept", Num(env, static_cast<double>(c.kept)));
    o.Set("released", Num(env, static_cast<double>(c.released)));
    o.Set("overwritten", Num(env, static_cast<double>(c.overwritten)));
    o.Set("dropped", Num(env, static_cast<double>(c.dropped)));
    list.Set(i, o);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("lost", Napi::Boolean::New(env, tracer.lost_any()));
  out.Set("limit", Num(env, static_cast<double>(tracer.memory_limit())));
  out.Set("used", Num(env, static_cast<double>(tracer.memory_used())));
  out.Set("onFull", Napi::String::New(
                        env, tracer.on_full() == hotspan::FullPolicy::kDrop ? "drop" : "overwrite"));
  out.Set("timelines", list);
  out.Set("sampledOut", Num(env, static_cast<double>(tracer.sampled_out())));
  return out;
}

Napi::Value ChromeJson(const Napi::CallbackInfo& info) {
  // Handed to JS as an external Buffer over the writer's own bytes: a string
  // would cost a UTF-8 decode here and an encode again in writeFile.
  auto* out = new std::string();
  hotspan::write_chrome_json(*Self(info).tracer, *out);
  return Napi::Buffer<char>::New(info.Env(), out->data(), out->size(),
                                 [](Napi::Env, char*, std::string* s) { delete s; }, out);
}

Napi::Value Perfetto(const Napi::CallbackInfo& info) {
  // An external Buffer over the writer's bytes, as for chromeJson.
  const hotspan::Tracer& tracer = *Self(info).tracer;
  auto* out = new std::string();
  const hotspan::FrozenSnapshot snap = tracer.freeze();
  hotspan::write_perfetto(snap, hotspan::document_of(snap, tracer.origin_ns(), hotspan::read_clocks()).of_process(hotspan::current_pid(), tracer.process_name()),
                          *out);
  return Napi::Buffer<char>::New(info.Env(), out->data(), out->size(),
                                 [](Napi::Env, char*, std::string* s) { delete s; }, out);
}

Napi::Value WriteFileMethod(const Napi::CallbackInfo& info) { return WriteFile(info, Self(info)); }
Napi::Value WriteFileNowMethod(const Napi::CallbackInfo& info) { return WriteFileNow(info, Self(info)); }
Napi::Value StreamMethod(const Napi::CallbackInfo& info) { return StartStream(info, Self(info)); }

Napi::Value ShareToken(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), shared_tracers::TokenFor(Self(info).tracer));
}

Napi::Value NativeApi(const Napi::CallbackInfo& info) {
  // The table is never freed (see c_api.h), so the External needs no finalizer.
  const hotspan_api_v1* api = hotspan::c_api_for(Self(info).tracer);
  return Napi::External<hotspan_api_v1>::New(info.Env(), const_cast<hotspan_api_v1*>(api));
}

void Close(const Napi::CallbackInfo& info) { Self(info).Close(); }

Napi::Value Closed(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), Self(info).tracer->closed());
}

struct Method {
  const char* name;
  napi_callback raw;   // hot path: an own function of each tracer object, the binding as data ...
  napi_callback cold;  // ... or a method of the shared prototype (Self: the binding of `this`)
};

template <Napi::Function::Callback cb>
napi_value Cold(napi_env env, napi_callback_info info) {
  try {
    return cb(Napi::CallbackInfo(env, info));
  } catch (const Napi::Error& e) {
    e.ThrowAsJavaScriptException();
    return nullptr;
  }
}

template <Napi::Function::VoidCallback cb>
napi_value ColdVoid(napi_env env, napi_callback_info info) {
  try {
    cb(Napi::CallbackInfo(env, info));
  } catch (const Napi::Error& e) {
    e.ThrowAsJavaScriptException();
  }
  return nullptr;
}

// The tracer object's methods, in the order they are defined.
// <generated from schema/boundary.json by scripts/gen-boundary.mjs (npm run gen)>
const Method kMethods[] = {
    {"begin", &span_calls::Begin, nullptr},
    {"end", &span_calls::End, nullptr},
    {"defineShape", &slots::DefineShape, nullptr},
    {"defineValue", &slots::DefineValue, nullptr},
    {"slotView", &slots::SlotView, nullptr},
    {"intern", nullptr, &Cold<Intern>},
    {"openDepth", nullptr, &Cold<OpenDepth>},
    {"innermost", nullptr, &Cold<Innermost>},
    {"stateView", nullptr, &Cold<StateView>},
    {"setThreadName", nullptr, &ColdVoid<SetThreadName>},
    {"track", nullptr, &Cold<Track>},
    {"asyncBegin", &span_calls::AsyncBegin, nullptr},
    {"asyncEnd", &span_calls::AsyncEnd, nullptr},
    {"asyncView", &hot::AsyncView, nullptr},
    {"openAsync", nullptr, &Cold<OpenAsync>},
    {"groupBegin", nullptr, &Cold<GroupBegin>},
    {"groupEnd", nullptr, &Cold<GroupEnd>},
    {"openGroups", nullptr, &Cold<OpenGroups>},
    {"counter", nullptr, &Cold<Counter>},
    {"cpuProfile", nullptr, &Cold<CpuProfile>},
    {"profileInterval", nullptr, &Cold<ProfileInterval>},
    {"flush", nullptr, &ColdVoid<Flush>},
    {"pending", nullptr, &Cold<Pending>},
    {"snapshot", nullptr, &Cold<Snapshot>},
    {"freeze", nullptr, &Cold<Freeze>},
    {"read", nullptr, &Cold<Read>},
    {"readAt", nullptr, &Cold<ReadAt>},
    {"query", nullptr, &Cold<Query>},
    {"stats", nullptr, &Cold<Stats>},
    {"counts", nullptr, &Cold<Counts>},
    {"chromeJson", nullptr, &Cold<ChromeJson>},
    {"perfetto", nullptr, &Cold<Perfetto>},
    {"writeFile", nullptr, &Cold<WriteFileMethod>},
    {"writeFileNow", nullptr, &Cold<WriteFileNowMethod>},
    {"stream", nullptr, &Cold<StreamMethod>},
    {"shareToken", nullptr, &Cold<ShareToken>},
    {"nativeApi", nullptr, &Cold<NativeApi>},
    {"close", nullptr, &ColdVoid<Close>},
    {"closed", nullptr, &Cold<Closed>},
    {"openIds", nullptr, &Cold<trace_context::OpenIds>},
    {"idsOf", nullptr, &Cold<trace_context::IdsOf>},
    {"spanIds", nullptr, &Cold<trace_context::SpanIds>},
    {"spanTracestates", nullptr, &Cold<trace_context::SpanTracestates>},
    {"idSalt", nullptr, &Cold<trace_context::IdSalt>},
};
// </generated>

}  // namespace

namespace {

napi_value NoConstruct(napi_env, napi_callback_info) { return nullptr; }

// This env's class of tracer objects: its prototype holds the cold methods.
napi_value TracerClass(Napi::Env env, EnvData& data) {
  napi_value cls = nullptr;
  if (data.tracer_class != nullptr) {
    NAPI_THROW_IF_FAILED(env, napi_get_reference_value(env, data.tracer_class, &cls), nullptr);
    if (cls != nullptr) return cls;
  }
  std::vector<napi_property_descriptor> props;
  for (const Method& m : kMethods) {
    if (m.cold == nullptr) continue;
    // Writable and configurable (a facade may wrap a method), not enumerable.
    props.push_back({m.name, nullptr, m.cold, nullptr, nullptr, nullptr, napi_default_method, nullptr});
  }
  NAPI_THROW_IF_FAILED(env,
                       napi_define_class(env, "NativeTracer", NAPI_AUTO_LENGTH, &NoConstruct, nullptr,
                                         props.size(), props.data(), &cls),
                       nullptr);
  NAPI_THROW_IF_FAILED(env, napi_create_reference(env, cls, 1, &data.tracer_class), nullptr);
  return cls;
}

}  // namespace

TracerBinding& BindingOf(Napi::Env env, Napi::Value self) {
  bool tagged = false;
  void* raw = nullptr;
  if (!self.IsObject() || napi_check_object_type_tag(env, self, &kTracerObjectTag, &tagged) != napi_ok ||
      !tagged || napi_unwrap(env, self, &raw) != napi_ok || raw == nullptr) {
    throw Napi::TypeError::New(env, "hotspan: a NativeTracer method was called on something that is not a NativeTracer");
  }
  return *static_cast<TracerBinding*>(raw);
}

Napi::Object NewTracerObject(Napi::Env env, TracerBinding* binding) {
  napi_value cls = TracerClass(env, *binding->env_data);
  napi_value raw_obj = nullptr;
  NAPI_THROW_IF_FAILED(env, napi_new_instance(env, cls, 0, nullptr, &raw_obj), Napi::Object());
  Napi::Object obj(env, raw_obj);
  NAPI_THROW_IF_FAILED(env, napi_type_tag_object(env, obj, &kTracerObjectTag), Napi::Object());
  if (!binding->WrapHandle(env, obj)) {
    throw Napi::Error::New(env, "hotspan: could not register a finalizer");
  }
  // The per-span entry points (span_calls.h): slot functions that need no
  // napi_get_cb_info on their common forms, when a slot is free (else the
  // data-pointer ones).
  call_slots::Functions slot_fns{&span_calls::Begin, &span_calls::End, &span_calls::AsyncBegin,
                                 &span_calls::AsyncEnd};
  if (binding->call_slot == call_slots::kNone) {
    binding->call_slot = call_slots::Acquire(binding, &slot_fns);
  }
  for (const Method& m : kMethods) {
    if (m.raw == nullptr) continue;
    napi_callback cb = m.raw == &span_calls::Begin        ? slot_fns.begin
                       : m.raw == &span_calls::End        ? slot_fns.end
                       : m.raw == &span_calls::AsyncBegin ? slot_fns.async_begin
                       : m.raw == &span_calls::AsyncEnd   ? slot_fns.async_end
                                                          : m.raw;
    napi_value fn;
    NAPI_THROW_IF_FAILED(env, napi_create_function(env, m.name, NAPI_AUTO_LENGTH, cb, binding, &fn),
                         Napi::Object());
    if (!binding->AddHandle(env, fn)) {
      throw Napi::Error::New(env, "hotspan: could not register a finalizer");
    }
    napi_property_descriptor desc = {m.name,  nullptr, nullptr, nullptr,
                                     nullptr, fn,      napi_default_method, nullptr};
    NAPI_THROW_IF_FAILED(env, napi_define_properties(env, obj, 1, &desc), Napi::Object());
  }
  return obj;
}

}  // namespace hotspan_addon
