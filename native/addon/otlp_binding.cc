#include "otlp_binding.h"

#include <memory>
#include <string>
#include <utility>

#include "arg_check.h"
#include "record/clock_readings.h"
#include "record/chunk_pool.h"
#include "export/otlp_source.h"
#include "shared_tracers.h"

namespace hotspan_addon {

namespace {

const napi_type_tag kOtlpSourceTag = {0x686f747370616e31ULL, 0x6f746c70737263ULL};

void Finalize(napi_env, void* data, void*) { delete static_cast<hotspan::OtlpSource*>(data); }

hotspan::OtlpResource ResourceOption(Napi::Env env, const Napi::Object& config) {
  hotspan::OtlpResource r;
  Napi::Value attrs = config.Get("resource");
  if (!attrs.IsArray()) ThrowArgTypeCxx(env, "config.resource", "an array of [key, value] strings", attrs);
  auto list = attrs.As<Napi::Array>();
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Napi::Value kv = list.Get(i);
    if (!kv.IsArray() || kv.As<Napi::Array>().Length() != 2 || !kv.As<Napi::Array>().Get(0u).IsString() ||
        !kv.As<Napi::Array>().Get(1u).IsString()) {
      ThrowArgTypeCxx(env, "config.resource[i]", "a [key, value] pair of strings", kv);
    }
    r.attributes.emplace_back(kv.As<Napi::Array>().Get(0u).As<Napi::String>().Utf8Value(),
                              kv.As<Napi::Array>().Get(1u).As<Napi::String>().Utf8Value());
  }
  Napi::Value version = config.Get("scopeVersion");
  if (!version.IsString()) ThrowArgTypeCxx(env, "config.scopeVersion", "a string", version);
  r.scope_version = version.As<Napi::String>().Utf8Value();
  return r;
}

Napi::Value Source(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string token = ARG_STRING(0, "token");
  Napi::Object config = ARG_OBJECT(1, "config");
  std::shared_ptr<hotspan::Tracer> tracer = shared_tracers::Find(token);
  if (!tracer) throw Napi::Error::New(env, "hotspan: unknown tracer token '" + token + "'");
  Napi::Value enc = config.Get("encoding");
  const std::string encoding = enc.IsString() ? enc.As<Napi::String>().Utf8Value() : "";
  if (encoding != "protobuf" && encoding != "json") {
    ThrowArgTypeCxx(env, "config.encoding", "'protobuf' or 'json'", enc);
  }
  const hotspan::ClockReadings clocks = hotspan::read_clocks();
  hotspan::OtlpSource* source =
      hotspan::OtlpSource::open(tracer, ResourceOption(env, config),
                                encoding == "json" ? hotspan::OtlpEncoding::kJson : hotspan::OtlpEncoding::kProtobuf,
                                clocks.realtime_ns - clocks.monotonic_ns)
          .release();
  if (source == nullptr) {
    throw Napi::Error::New(env, "hotspan: exportOtlp: every record consumer slot of this tracer is taken (" +
                                    std::to_string(hotspan::ChunkPool::kMaxConsumers) + " streams and exporters)");
  }
  Napi::Object obj = Napi::Object::New(env);
  if (napi_wrap(env, obj, source, Finalize, nullptr, nullptr) != napi_ok) {
    delete source;
    throw Napi::Error::New(env);
  }
  if (napi_type_tag_object(env, obj, &kOtlpSourceTag) != napi_ok) throw Napi::Error::New(env);
  return obj;
}

hotspan::OtlpSource& ArgSource(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  bool tagged = false;
  if (info[0].IsObject() && napi_check_object_type_tag(env, info[0], &kOtlpSourceTag, &tagged) != napi_ok) {
    throw Napi::Error::New(env);
  }
  if (!tagged) ThrowArgTypeCxx(env, "source", "a source from otlpSource()", info[0]);
  void* data = nullptr;
  if (napi_unwrap(env, info[0], &data) != napi_ok) throw Napi::Error::New(env);
  return *static_cast<hotspan::OtlpSource*>(data);
}

// -> { body: Buffer | undefined, spans, lost, waiting, unread, sampledOut, keepTimedOut }
Napi::Value Next(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  hotspan::OtlpSource& source = ArgSource(info);
  const uint32_t max_spans = ARG_UINT32(1, "maxSpans");
  if (max_spans == 0) throw Napi::RangeError::New(env, "hotspan: maxSpans must be at least 1");
  const bool final = ARG_BOOL(2, "final");
  auto* body = new std::string();
  const hotspan::OtlpSource::Batch b = source.next(max_spans, final, *body);
  Napi::Object out = Napi::Object::New(env);
  if (b.spans != 0) {
    // The request's bytes are handed over, not copied.
    out.Set("body", Napi::Buffer<char>::New(env, body->data(), body->size(),
                                            [](Napi::Env, char*, std::string* s) { delete s; }, body));
  } else {
    delete body;
  }
  out.Set("spans", Napi::Number::New(env, static_cast<double>(b.spans)));
  out.Set("lost", Napi::Number::New(env, static_cast<double>(b.lost)));
  out.Set("waiting", Napi::Number::New(env, static_cast<double>(source.waiting())));
  out.Set("unread", Napi::Number::New(env, static_cast<double>(source.unread())));
  out.Set("sampledOut", Napi::Number::New(env, static_cast<double>(b.sampled_out)));
  out.Set("keepTimedOut", Napi::Number::New(env, static_cast<double>(b.keep_timed_out)));
  return out;
}

// -> { spans, lost, waiting, unread, sampledOut, keepTimedOut }: what a stop past its deadline abandons, counted, not encoded.
Napi::Value Discard(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  hotspan::OtlpSource& source = ArgSource(info);
  const hotspan::OtlpSource::Batch b = source.discard();
  Napi::Object out = Napi::Object::New(env);
  out.Set("spans", Napi::Number::New(env, static_cast<double>(b.spans)));
  out.Set("lost", Napi::Number::New(env, static_cast<double>(b.lost)));
  out.Set("waiting", Napi::Number::New(env, static_cast<double>(source.waiting())));
  out.Set("unread", Napi::Number::New(env, static_cast<double>(source.unread())));
  out.Set("sampledOut", Napi::Number::New(env, static_cast<double>(b.sampled_out)));
  out.Set("keepTimedOut", Napi::Number::New(env, static_cast<double>(b.keep_timed_out)));
  return out;
}

}  // namespace

void InitOtlp(Napi::Env env, Napi::Object exports) {
  exports.Set("otlpSource", Napi::Function::New<Source>(env, "otlpSource"));
  exports.Set("otlpNext", Napi::Function::New<Next>(env, "otlpNext"));
  exports.Set("otlpDiscard", Napi::Function::New<Discard>(env, "otlpDiscard"));
}

}  // namespace hotspan_addon
