#include "write/file_block_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace hotspan {

FileBlockWriter::FileBlockWriter(std::string path, size_t block_bytes)
    : BlockSink(block_bytes), path_(std::move(path)) {
  // The writer thread's push_back into spare_ then never allocates (an
  // exception there would end the process). At most kInFlight + 2 blocks
  // exist: kInFlight queued, one being written, one in the formatter's hands.
  spare_.reserve(kInFlight + 2);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    error_ = errno;
    error_op_ = "open";
    return;  // no thread: take() drops everything, finish() reports the error
  }
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    // No writer thread: report it as the open step failing, file closed.
    ::close(fd_);
    fd_ = -1;
    error_ = e.code().value() != 0 ? e.code().value() : EAGAIN;
    error_op_ = "thread";
  }
}

FileBlockWriter::~FileBlockWriter() {
  const char* op;
  finish(&op);
}

void FileBlockWriter::fail(int err, const char* op) {
  if (error_ == 0) {
    error_ = err;
    error_op_ = op;
  }
}

void FileBlockWriter::take(const char* data, size_t n) {
  if (n == 0) return;
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return error_ != 0 || queue_.size() < kInFlight; });
  if (error_ != 0) return;
  std::string block;
  if (!spare_.empty()) {
    block = std::move(spare_.back());
    spare_.pop_back();
  }
  block.assign(data, n);  // reuses the spare's capacity
  queue_.push_back(Block{std::move(block), n});
  changed_.notify_all();
}

void FileBlockWriter::take_block(std::string& block, size_t n) {
  if (n == 0) return;
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return error_ != 0 || queue_.size() < kInFlight; });
  if (error_ != 0) return;
  std::string spare;  // empty when none is free yet: the caller sizes it
  if (!spare_.empty()) {
    spare = std::move(spare_.back());
    spare_.pop_back();
  }
  // Its size kept: the formatter gets it back sized, with nothing to zero.
  queue_.push_back(Block{std::move(block), n});
  block = std::move(spare);
  changed_.notify_all();
}

void FileBlockWriter::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    changed_.wait(lock, [this] { return done_ || !queue_.empty(); });
    if (queue_.empty()) return;  // done_ and drained
    Block b = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    const bool failed = error_ != 0;
    lock.unlock();
    int err = 0;
    size_t off = 0;
    while (!failed && off < b.n) {
      const ssize_t w = ::write(fd_, b.bytes.data() + off, b.n - off);
      if (w < 0) {
        if (errno == EINTR) continue;
        err = errno;
        break;
      }
      off += static_cast<size_t>(w);
    }
    lock.lock();
    writing_ = false;
    // What write() took, all of the block or, before a failure, part of it:
    // the bytes the file holds.
    if (!failed) written_ += off;
    if (err != 0) fail(err, "write");
    // Not cleared: a formatter that sizes its buffer up front then finds it
    // sized (no refill of bytes it is about to overwrite).
    spare_.push_back(std::move(b.bytes));
    changed_.notify_all();
  }
}

uint64_t FileBlockWriter::written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return written_;
}

int FileBlockWriter::error(const char** op) const {
  std::lock_guard<std::mutex> lock(mu_);
  *op = error_op_;
  return error_;
}

int FileBlockWriter::drain(const char** op) {
  std::unique_lock<std::mutex> lock(mu_);
  // Without a thread (the open failed) nothing was queued.
  changed_.wait(lock, [this] { return queue_.empty() && !writing_; });
  *op = error_op_;
  return error_;
}

int FileBlockWriter::finish(const char** op) {
  if (!finished_) {
    finished_ = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0 && ::close(fd_) != 0) {
      std::lock_guard<std::mutex> lock(mu_);
      fail(errno, "close");
    }
    fd_ = -1;
  }
  std::lock_guard<std::mutex> lock(mu_);
  *op = error_op_;
  return error_;
}

}  // namespace hotspan
