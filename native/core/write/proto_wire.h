// Protobuf wire encoding, hand-written (no libprotobuf): varints, field keys,
// length-delimited fields. One implementation for every protobuf the core
// writes (Perfetto traces, OTLP requests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace hotspan::proto_wire {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

// Base-128 varint (little-endian groups of 7 bits); at most 10 bytes.
inline size_t varint_size(uint64_t v) {
  // ceil(significant bits / 7), at least 1, without a loop.
  const auto bits = static_cast<size_t>(64 - __builtin_clzll(v | 1));
  return (bits * 9 + 64) / 64;
}
inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// A field key and a length (the length-delimited field's body follows).
inline void put_key_len(std::string& out, uint32_t field, size_t n) {
  uint8_t b[20];
  uint8_t* p = put_varint(b, static_cast<uint64_t>(field) << 3 | kLen);
  p = put_varint(p, n);
  out.append(reinterpret_cast<char*>(b), static_cast<size_t>(p - b));
}

inline void put_key_varint(std::string& out, uint32_t field, uint64_t v) {
  uint8_t b[20];
  uint8_t* p = put_varint(b, static_cast<uint64_t>(field) << 3 | kVarint);
  p = put_varint(p, v);
  out.append(reinterpret_cast<char*>(b), static_cast<size_t>(p - b));
}

// fixed64 / double: little-endian hosts (x86-64, arm64, wasm32).
inline void put_key_fixed64(std::string& out, uint32_t field, const void* le8) {
  uint8_t b[10];
  uint8_t* p = put_varint(b, static_cast<uint64_t>(field) << 3 | kFixed64);
  out.append(reinterpret_cast<char*>(b), static_cast<size_t>(p - b));
  out.append(static_cast<const char*>(le8), 8);
}

inline void put_key_bytes(std::string& out, uint32_t field, const char* p, size_t n) {
  put_key_len(out, field, n);
  out.append(p, n);
}

// Opens a length-delimited field of a one-byte key whose length is patched
// by close_len: the length is reserved as one byte and widened in place in
// the rare case the body passes 127 bytes.
inline size_t open_len(std::string& out, uint8_t key) {
  out.push_back(static_cast<char>(key));
  out.push_back(0);
  return out.size();
}
inline void close_len(std::string& out, size_t body) {
  const size_t n = out.size() - body;
  if (n < 0x80) {
    out[body - 1] = static_cast<char>(n);
    return;
  }
  uint8_t b[10];
  const size_t k = static_cast<size_t>(put_varint(b, n) - b);
  out.insert(body, k - 1, '\0');
  std::memcpy(&out[body - 1], b, k);
}
// The one-byte key of a length-delimited field number below 16.
constexpr uint8_t len_key(uint32_t field) { return static_cast<uint8_t>(field << 3 | kLen); }

// A message built in its own string (cold paths: descriptors, headers).
struct Message {
  std::string s;
  void varint(uint64_t v) {
    uint8_t b[10];
    s.append(reinterpret_cast<char*>(b), static_cast<size_t>(put_varint(b, v) - b));
  }
  void key(uint32_t field, uint32_t wire) { varint((static_cast<uint64_t>(field) << 3) | wire); }
  void uint(uint32_t field, uint64_t v) { put_key_varint(s, field, v); }
  void bytes(uint32_t field, const char* p, size_t n) { put_key_bytes(s, field, p, n); }
  void str(uint32_t field, const std::string& v) { bytes(field, v.data(), v.size()); }
  void msg(uint32_t field, const Message& m) { bytes(field, m.s.data(), m.s.size()); }
};

}  // namespace hotspan::proto_wire
