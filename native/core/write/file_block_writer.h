// A BlockSink that writes a file on a thread of its own, so formatting the
// next block overlaps the write of the previous one. At most kInFlight
// blocks wait (the formatter blocks beyond that); their buffers are reused,
// and take_block trades the formatter's buffer for a written one instead of
// copying it.
// The first error (open, write, close) is kept and ends the writing; later
// blocks are dropped. A caller that must know what reached the file before
// the end (the stream counts a batch written only then) reads written(),
// error() and drain().
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "write/block_sink.h"

namespace hotspan {

class FileBlockWriter : public BlockSink {
 public:
  static constexpr size_t kBlockBytes = 1 << 20;
  static constexpr size_t kInFlight = 4;

  // Creates or truncates `path` (mode 0666 before umask).
  explicit FileBlockWriter(std::string path, size_t block_bytes = kBlockBytes);
  ~FileBlockWriter() override;  // finish()es if the caller did not

  void take(const char* data, size_t n) override;
  void take_block(std::string& block, size_t n) override;
  // Writes what is queued, closes the file and joins the thread. Returns 0 or
  // the first errno; *op names the failed step ("open", "thread", "write",
  // "close").
  int finish(const char** op);

  // Bytes write() has taken so far: blocks wholly written, in order.
  uint64_t written() const;
  // The first error so far (0: none), *op naming its step as finish() does.
  int error(const char** op) const;
  // Waits until every block taken so far is written (or dropped after an
  // error); then error(op).
  int drain(const char** op);

 private:
  void run();
  void fail(int err, const char* op);  // under mu_

  const std::string path_;
  int fd_ = -1;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  struct Block {
    std::string bytes;
    size_t n;  // bytes[0, n) to write
  };
  std::deque<Block> queue_;        // guarded by mu_
  bool writing_ = false;           // guarded by mu_: a block is out of the queue, being written
  uint64_t written_ = 0;           // guarded by mu_
  std::vector<std::string> spare_;  // guarded by mu_: written buffers to reuse
  bool done_ = false;               // guarded by mu_: no more blocks
  int error_ = 0;                   // guarded by mu_
  const char* error_op_ = nullptr;  // guarded by mu_
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace hotspan
