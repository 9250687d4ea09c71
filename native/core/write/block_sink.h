// Where a writer's output goes when it is streamed rather than built whole:
// blocks of at least block_bytes (except the last), cut at event boundaries.
// Streaming keeps the writer's buffer small and reused, so a large trace
// costs no page faults for its own bytes and can be written as it is made.
#pragma once

#include <cstddef>
#include <string>

namespace hotspan {

class BlockSink {
 public:
  explicit BlockSink(size_t block_bytes) : block_bytes_(block_bytes) {}
  virtual ~BlockSink() = default;
  BlockSink(const BlockSink&) = delete;
  BlockSink& operator=(const BlockSink&) = delete;

  size_t block_bytes() const { return block_bytes_; }
  // Consumes n bytes (copies or writes them) before returning.
  virtual void take(const char* data, size_t n) = 0;
  // Consumes block[0, n). A sink that queues blocks may keep `block` itself
  // and put another buffer in its place (contents and size unspecified, its
  // capacity there to reuse), so a block is never copied. By default: take().
  virtual void take_block(std::string& block, size_t n) { take(block.data(), n); }

 private:
  const size_t block_bytes_;
};

}  // namespace hotspan
