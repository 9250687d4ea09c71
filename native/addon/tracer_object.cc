#include "tracer_object.h"

#include <cmath>
#include <string>

#include "arg_check.h"
#include "c_api.h"
#include "clock.h"
#include "end_slots.h"
#include "hot_path.h"
#include "perfetto_writer.h"
#include "shared_tracers.h"
#include "snapshot_convert.h"
#include "write_file.h"

namespace hotspan_addon {

const napi_type_tag kTracerObjectTag = {0x686f747370616e31ULL, 0x7472616365723a31ULL};

namespace {

inline TracerBinding& Self(const Napi::CallbackInfo& info) {
  return *static_cast<TracerBinding*>(info.Data());
}

inline Napi::Number Num(Napi::Env env, double v) { return Napi::Number::New(env, v); }

inline Napi::Number StatusNum(Napi::Env env, hotspan::Status s) {
  return Napi::Number::New(env, static_cast<double>(static_cast<int>(s)));
}

// Async tokens are track id << 32 | local id: exact in a double while the
// track id is below 2^21. Anything that is not such an integer is no token.
uint64_t TokenFromNumber(double d) {
  if (!(d > 0) || d > 9007199254740991.0 || std::floor(d) != d) return 0;
  return static_cast<uint64_t>(d);
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

void SetThreadName(const Napi::CallbackInfo& info) {
  std::string name = ARG_STRING(0, "name");
  TracerBinding& b = Self(info);
  b.tracer->set_thread_name(*b.thread, name);
}

Napi::Value Track(const Napi::CallbackInfo& info) {
  std::string name = ARG_STRING(0, "name");
  bool serial = ARG_BOOL(1, "serial");
  return Num(info.Env(), Self(info).tracer->track(name, serial));
}

Napi::Value AsyncBegin(const Napi::CallbackInfo& info) {
  uint32_t track = ARG_UINT32(0, "track");
  uint32_t name = ARG_UINT32(1, "nameId");
  std::string attrs = ARG_OPT_STRING(2, "attrsJson");
  uint64_t token =
      Self(info).tracer->async_begin(track, name, hotspan::clock::now_ticks(), std::move(attrs));
  return Num(info.Env(), static_cast<double>(token));
}

Napi::Value AsyncEnd(const Napi::CallbackInfo& info) {
  const int64_t now = hotspan::clock::now_ticks();
  double token = ARG_NUMBER(0, "token");
  uint32_t flags = info[1].IsUndefined() ? 0 : ARG_UINT32(1, "flags");
  return StatusNum(info.Env(), Self(info).tracer->async_end(TokenFromNumber(token), now,
                                                            static_cast<uint16_t>(flags)));
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

void Flush(const Napi::CallbackInfo& info) { Self(info).tracer->flush(); }

Napi::Value Pending(const Napi::CallbackInfo& info) {
  return Num(info.Env(), static_cast<double>(Self(info).tracer->pending()));
}

Napi::Value Snapshot(const Napi::CallbackInfo& info) {
  const hotspan::Tracer& tracer = *Self(info).tracer;
  return SnapshotToJs(info.Env(), tracer.freeze(), tracer.origin_ns());
}

Napi::Value Stats(const Napi::CallbackInfo& info) {
  const hotspan::Tracer& tracer = *Self(info).tracer;
  return StatsToJs(info.Env(), tracer.stats(), tracer);
}

Napi::Value ChromeJson(const Napi::CallbackInfo& info) {
  // Handed to JS as an external Buffer over the writer's own bytes: a string
  // would cost a UTF-8 decode here and an encode again in writeFile.
  auto* out = new std::string();
  Self(info).tracer->write_chrome_json(*out);
  return Napi::Buffer<char>::New(info.Env(), out->data(), out->size(),
                                 [](Napi::Env, char*, std::string* s) { delete s; }, out);
}

Napi::Value Perfetto(const Napi::CallbackInfo& info) {
  // An external Buffer over the writer's bytes, as for chromeJson.
  const hotspan::Tracer& tracer = *Self(info).tracer;
  auto* out = new std::string();
  hotspan::write_perfetto(tracer.freeze(), tracer.origin_ns(), hotspan::read_clocks(), *out);
  return Napi::Buffer<char>::New(info.Env(), out->data(), out->size(),
                                 [](Napi::Env, char*, std::string* s) { delete s; }, out);
}

Napi::Value WriteFileMethod(const Napi::CallbackInfo& info) { return WriteFile(info, Self(info)); }

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
  napi_callback raw;  // hot path (raw Node-API) ...
  Napi::Function (*cold)(napi_env, const char*, void*);  // ... or node-addon-api
};

template <Napi::Function::Callback cb>
Napi::Function Cold(napi_env env, const char* name, void* data) {
  return Napi::Function::New<cb>(env, name, data);
}

template <Napi::Function::VoidCallback cb>
Napi::Function ColdVoid(napi_env env, const char* name, void* data) {
  return Napi::Function::New<cb>(env, name, data);
}

const Method kMethods[] = {
    {"begin", &hot::Begin, nullptr},
    {"end", &hot::End, nullptr},
    {"beginAttrs", &hot::BeginAttrs, nullptr},
    {"endFlags", &hot::EndFlags, nullptr},
    {"beginDepth", &hot::BeginDepth, nullptr},
    {"endAt", &hot::EndAt, nullptr},
    {"intern", nullptr, &Cold<Intern>},
    {"openDepth", nullptr, &Cold<OpenDepth>},
    {"innermost", nullptr, &Cold<Innermost>},
    {"setThreadName", nullptr, &ColdVoid<SetThreadName>},
    {"track", nullptr, &Cold<Track>},
    {"asyncBegin", nullptr, &Cold<AsyncBegin>},
    {"asyncEnd", nullptr, &Cold<AsyncEnd>},
    {"openAsync", nullptr, &Cold<OpenAsync>},
    {"groupBegin", nullptr, &Cold<GroupBegin>},
    {"groupEnd", nullptr, &Cold<GroupEnd>},
    {"openGroups", nullptr, &Cold<OpenGroups>},
    {"counter", nullptr, &Cold<Counter>},
    {"flush", nullptr, &ColdVoid<Flush>},
    {"pending", nullptr, &Cold<Pending>},
    {"snapshot", nullptr, &Cold<Snapshot>},
    {"stats", nullptr, &Cold<Stats>},
    {"chromeJson", nullptr, &Cold<ChromeJson>},
    {"perfetto", nullptr, &Cold<Perfetto>},
    {"writeFile", nullptr, &Cold<WriteFileMethod>},
    {"shareToken", nullptr, &Cold<ShareToken>},
    {"nativeApi", nullptr, &Cold<NativeApi>},
    {"close", nullptr, &ColdVoid<Close>},
    {"closed", nullptr, &Cold<Closed>},
};

}  // namespace

Napi::Object NewTracerObject(Napi::Env env, TracerBinding* binding) {
  Napi::Object obj = Napi::Object::New(env);
  NAPI_THROW_IF_FAILED(env, napi_type_tag_object(env, obj, &kTracerObjectTag), Napi::Object());
  for (const Method& m : kMethods) {
    napi_value fn;
    if (m.raw != nullptr) {
      napi_callback cb = m.raw;
      // end(): a slot function that needs no napi_get_cb_info, when one is free.
      if (cb == &hot::End && binding->end_slot == end_slots::kNone) {
        binding->end_slot = end_slots::Acquire(binding->thread, &cb);  // cb kept when none is free
      }
      NAPI_THROW_IF_FAILED(
          env, napi_create_function(env, m.name, NAPI_AUTO_LENGTH, cb, binding, &fn),
          Napi::Object());
    } else {
      fn = m.cold(env, m.name, binding);
    }
    if (!binding->AddHandle(env, fn)) {
      throw Napi::Error::New(env, "hotspan: could not register a finalizer");
    }
    // Writable and configurable (a facade may wrap a method), not enumerable.
    napi_property_descriptor desc = {m.name,  nullptr, nullptr, nullptr,
                                     nullptr, fn,      napi_default_method, nullptr};
    NAPI_THROW_IF_FAILED(env, napi_define_properties(env, obj, 1, &desc), Napi::Object());
  }
  return obj;
}

}  // namespace hotspan_addon
