// Argument checks. Every bad argument becomes a TypeError (code
// ERR_INVALID_ARG_TYPE) that names the argument and the type it got, so a
// facade bug points at itself. Two flavours: node-addon-api for the cold
// methods (C++ exceptions, converted by node-addon-api), raw Node-API for the
// hot path (no exception objects unless the check fails).
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>

namespace hotspan_addon {

// `d` as a uint32 when it is one exactly; false for anything else (a
// fraction, out of range, NaN). Shared by ArgUint32, the stream's keep and
// the async and slot views' entries.
inline bool ExactU32(double d, uint32_t* out) {
  if (!(d >= 0 && d <= 4294967295.0)) return false;
  *out = static_cast<uint32_t>(d);
  return static_cast<double>(*out) == d;
}

// typeof-style name of a value's type, for error messages.
const char* TypeName(napi_env env, napi_value value);

// Raw Node-API: throws `TypeError: hotspan: <arg> must be <expected> (got <type>)`
// and returns nullptr, so a callback can `return ThrowArgType(...)`.
napi_value ThrowArgType(napi_env env, const char* arg, const char* expected, napi_value got);

// node-addon-api: throw Napi::TypeError with the same message.
[[noreturn]] void ThrowArgTypeCxx(Napi::Env env, const char* arg, const char* expected,
                                  napi_value got);

uint32_t ArgUint32(const Napi::CallbackInfo& info, size_t index, const char* arg);
double ArgNumber(const Napi::CallbackInfo& info, size_t index, const char* arg);
bool ArgBool(const Napi::CallbackInfo& info, size_t index, const char* arg);
std::string ArgString(const Napi::CallbackInfo& info, size_t index, const char* arg);
// A string, or "" for undefined (optional attribute JSON).
std::string ArgOptString(const Napi::CallbackInfo& info, size_t index, const char* arg);
Napi::Object ArgObject(const Napi::CallbackInfo& info, size_t index, const char* arg);

}  // namespace hotspan_addon

// Short forms for the cold methods; `info` is the callback's CallbackInfo.
#define ARG_UINT32(i, name) ::hotspan_addon::ArgUint32(info, (i), (name))
#define ARG_NUMBER(i, name) ::hotspan_addon::ArgNumber(info, (i), (name))
#define ARG_BOOL(i, name) ::hotspan_addon::ArgBool(info, (i), (name))
#define ARG_STRING(i, name) ::hotspan_addon::ArgString(info, (i), (name))
#define ARG_OPT_STRING(i, name) ::hotspan_addon::ArgOptString(info, (i), (name))
#define ARG_OBJECT(i, name) ::hotspan_addon::ArgObject(info, (i), (name))
