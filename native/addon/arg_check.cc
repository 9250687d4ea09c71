#include "arg_check.h"

#include <cmath>
#include <cstdio>

namespace hotspan_addon {

const char* TypeName(napi_env env, napi_value value) {
  napi_valuetype type;
  if (value == nullptr || napi_typeof(env, value, &type) != napi_ok) return "unknown";
  switch (type) {
    case napi_undefined: return "undefined";
    case napi_null: return "null";
    case napi_boolean: return "boolean";
    case napi_number: return "number";
    case napi_string: return "string";
    case napi_symbol: return "symbol";
    case napi_object: return "object";
    case napi_function: return "function";
    case napi_external: return "external";
    case napi_bigint: return "bigint";
  }
  return "unknown";
}

namespace {

void FormatMessage(char* buf, size_t size, napi_env env, const char* arg, const char* expected,
                   napi_value got) {
  std::snprintf(buf, size, "hotspan: %s must be %s (got %s)", arg, expected, TypeName(env, got));
}

}  // namespace

napi_value ThrowArgType(napi_env env, const char* arg, const char* expected, napi_value got) {
  char msg[160];
  FormatMessage(msg, sizeof msg, env, arg, expected, got);
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
  return nullptr;
}

void ThrowArgTypeCxx(Napi::Env env, const char* arg, const char* expected, napi_value got) {
  char msg[160];
  FormatMessage(msg, sizeof msg, env, arg, expected, got);
  Napi::TypeError error = Napi::TypeError::New(env, msg);
  error.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  throw error;
}

uint32_t ArgUint32(const Napi::CallbackInfo& info, size_t index, const char* arg) {
  Napi::Value v = info[index];
  if (v.IsNumber()) {
    uint32_t out;
    if (ExactU32(v.As<Napi::Number>().DoubleValue(), &out)) return out;
  }
  ThrowArgTypeCxx(info.Env(), arg, "an integer in [0, 2^32)", v);
}

double ArgNumber(const Napi::CallbackInfo& info, size_t index, const char* arg) {
  Napi::Value v = info[index];
  if (!v.IsNumber()) ThrowArgTypeCxx(info.Env(), arg, "a number", v);
  return v.As<Napi::Number>().DoubleValue();
}

bool ArgBool(const Napi::CallbackInfo& info, size_t index, const char* arg) {
  Napi::Value v = info[index];
  if (!v.IsBoolean()) ThrowArgTypeCxx(info.Env(), arg, "a boolean", v);
  return v.As<Napi::Boolean>().Value();
}

std::string ArgString(const Napi::CallbackInfo& info, size_t index, const char* arg) {
  Napi::Value v = info[index];
  if (!v.IsString()) ThrowArgTypeCxx(info.Env(), arg, "a string", v);
  return v.As<Napi::String>().Utf8Value();
}

std::string ArgOptString(const Napi::CallbackInfo& info, size_t index, const char* arg) {
  Napi::Value v = info[index];
  if (v.IsUndefined()) return std::string();
  if (!v.IsString()) ThrowArgTypeCxx(info.Env(), arg, "a string or undefined", v);
  return v.As<Napi::String>().Utf8Value();
}

Napi::Object ArgObject(const Napi::CallbackInfo& info, size_t index, const char* arg) {
  Napi::Value v = info[index];
  if (!v.IsObject()) ThrowArgTypeCxx(info.Env(), arg, "an object", v);
  return v.As<Napi::Object>();
}

}  // namespace hotspan_addon
