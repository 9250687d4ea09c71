// W3C Trace Context ids (128-bit trace id, 64-bit span id) of hotspan spans,
// derived from a per-tracer random salt instead of stored: a span's wire id
// is a mix of the salt and its tracer-wide span id ((timeline << 32) | local),
// and a local root's trace id a mix of the salt and the root's span id. So a
// plain span pays nothing for them, and any reader of the records (a writer,
// the OTLP encoder, the OTel adapter) derives the same ids.
#pragma once

#include <cstdint>

namespace hotspan {

struct TraceId {
  uint64_t hi = 0;  // bytes 0..7 of the wire form, big-endian
  uint64_t lo = 0;  // bytes 8..15
  bool valid() const { return (hi | lo) != 0; }  // all-zero is invalid (W3C)
  bool operator==(const TraceId& o) const { return hi == o.hi && lo == o.lo; }
  bool operator!=(const TraceId& o) const { return !(*this == o); }
};

// W3C trace-flags bit 0.
constexpr uint8_t kTraceFlagSampled = 1;

namespace trace_id {

// A bijection of 64-bit values (the splitmix64 finalizer): distinct span ids
// of one tracer never share a wire id; mix(0) == 0.
inline uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// The 8-byte span id on the wire of tracer-wide span id `span` (never 0, the
// invalid id: the one span id that would map to 0 maps to the salt's mix).
inline uint64_t wire_span_id(uint64_t salt, uint64_t span) {
  const uint64_t w = mix(span ^ salt);
  return w != 0 ? w : (mix(salt) | 1);
}

// The trace id of the trace that local root `root_span` (a tracer-wide span
// id) starts. Two independent mixes, so the low 7 bytes are as random as the
// salt (W3C level 2's "random" trace ids); never all-zero.
inline TraceId derived_trace_id(uint64_t salt, uint64_t root_span) {
  TraceId t;
  t.hi = mix(mix(root_span ^ 0x9e3779b97f4a7c15ull) ^ salt);
  t.lo = mix(root_span ^ mix(salt ^ 0xd1b54a32d192ed03ull));
  if (!t.valid()) t.lo = 1;
  return t;
}

// 64 random bits for a tracer's salt (std::random_device), never 0.
uint64_t random_salt();

}  // namespace trace_id
}  // namespace hotspan
