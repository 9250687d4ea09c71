#include "stream_object.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "arg_check.h"
#include "write/trace_stream.h"
#include "write_file.h"

namespace hotspan_addon {

namespace {

const napi_type_tag kStreamTag = {0x686f747370616e31ULL, 0x73747265616d3a31ULL};

struct StreamHandle {
  std::unique_ptr<hotspan::TraceStream> stream;
  Napi::ThreadSafeFunction on_error;
  bool released = false;

  // Ends the stream (its thread joined) and lets go of the callback.
  void Close() {
    stream->close();
    if (!released) {
      released = true;
      on_error.Release();
    }
  }
};

void Finalize(napi_env, void* data, void*) {
  auto* h = static_cast<StreamHandle*>(data);
  h->Close();
  delete h;
}

StreamHandle& Self(const Napi::CallbackInfo& info) { return *static_cast<StreamHandle*>(info.Data()); }

Napi::Value Num(Napi::Env env, uint64_t v) { return Napi::Number::New(env, static_cast<double>(v)); }

void CloseMethod(const Napi::CallbackInfo& info) { Self(info).Close(); }

Napi::Value WakeMethod(const Napi::CallbackInfo& info) {
  Self(info).stream->wake();
  return info.Env().Undefined();
}

// { bytes, files, written, missed, unwritten, sampledOut, keepTimedOut, waiting, file, closed, error? }
Napi::Value StatusMethod(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const hotspan::StreamStatus s = Self(info).stream->status();
  Napi::Object o = Napi::Object::New(env);
  o.Set("bytes", Num(env, s.bytes));
  o.Set("files", Num(env, s.files));
  o.Set("written", Num(env, s.written));
  o.Set("missed", Num(env, s.missed));
  o.Set("unwritten", Num(env, s.unwritten));
  o.Set("sampledOut", Num(env, s.sampled_out));
  o.Set("keepTimedOut", Num(env, s.keep_timed_out));
  o.Set("waiting", Num(env, s.waiting));
  o.Set("file", Napi::String::New(env, s.file));
  o.Set("closed", Napi::Boolean::New(env, s.closed));
  if (s.error != 0) o.Set("error", FileError(env, s.error_path, s.error, s.error_op).Value());
  return o;
}

}  // namespace

Napi::Value StartStream(const Napi::CallbackInfo& info, TracerBinding& self) {
  Napi::Env env = info.Env();
  hotspan::StreamOptions options;
  options.path = ARG_STRING(0, "path");
  const double rotate = ARG_NUMBER(1, "rotateBytes");
  const double keep = ARG_NUMBER(2, "keep");
  if (!info[3].IsFunction()) ThrowArgTypeCxx(env, "onError", "a function", info[3]);
  // The facade checks the user's values; these guard the binding itself.
  if (!(rotate >= 0 && rotate <= 9007199254740991.0 && std::floor(rotate) == rotate) ||
      !ExactU32(keep, &options.keep) || options.path.empty()) {
    throw Napi::RangeError::New(env, "hotspan: bad stream arguments");
  }
  options.rotate_bytes = static_cast<uint64_t>(rotate);
  auto* h = new StreamHandle();
  h->on_error = Napi::ThreadSafeFunction::New(env, info[3].As<Napi::Function>(), "hotspan.stream", 0, 1);
  h->on_error.Unref(env);  // a stream never keeps the process alive
  Napi::ThreadSafeFunction tsfn = h->on_error;
  hotspan::StreamStatus failed;
  h->stream = hotspan::TraceStream::start(
      self.tracer, options, [tsfn]() mutable { tsfn.NonBlockingCall(); }, &failed);
  if (!h->stream) {
    h->on_error.Release();
    delete h;
    throw FileError(env, failed.error_path, failed.error, failed.error_op);
  }
  Napi::Object obj = Napi::Object::New(env);
  if (napi_wrap(env, obj, h, Finalize, nullptr, nullptr) != napi_ok) {
    h->Close();
    delete h;
    throw Napi::Error::New(env);
  }
  if (napi_type_tag_object(env, obj, &kStreamTag) != napi_ok) throw Napi::Error::New(env);
  obj.Set("close", Napi::Function::New<CloseMethod>(env, "close", h));
  obj.Set("status", Napi::Function::New<StatusMethod>(env, "status", h));
  obj.Set("wake", Napi::Function::New<WakeMethod>(env, "wake", h));
  return obj;
}

}  // namespace hotspan_addon
