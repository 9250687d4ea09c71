#include "trace_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <system_error>
#include <utility>

#include "clock_readings.h"

namespace hotspan {

// The current file: blocks written as they come, on the stream's thread
// (which exists to wait for the disk). The first error stops the writing.
class TraceStream::FileSink : public BlockSink {
 public:
  FileSink() : BlockSink(kBlockBytes) {}
  ~FileSink() override { close_file(); }

  int open_file(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    file_bytes_ = 0;
    return fd_ < 0 ? errno : 0;
  }
  // 0 or errno.
  int close_file() {
    if (fd_ < 0) return 0;
    const int r = ::close(fd_);
    fd_ = -1;
    return r == 0 ? 0 : errno;
  }
  void take(const char* data, size_t n) override {
    size_t off = 0;
    while (error_ == 0 && off < n) {
      const ssize_t w = ::write(fd_, data + off, n - off);
      if (w < 0) {
        if (errno != EINTR) error_ = errno;
        continue;
      }
      off += static_cast<size_t>(w);
      file_bytes_ += static_cast<uint64_t>(w);
      total_bytes_ += static_cast<uint64_t>(w);
    }
  }
  int error() const { return error_; }
  uint64_t file_bytes() const { return file_bytes_; }
  uint64_t total_bytes() const { return total_bytes_; }

 private:
  static constexpr size_t kBlockBytes = 256 << 10;
  int fd_ = -1;
  int error_ = 0;
  uint64_t file_bytes_ = 0;
  uint64_t total_bytes_ = 0;
};

namespace {
// Batches read per wake-up before the thread looks at its stop flag again.
constexpr int kBatchesPerRound = 64;
constexpr uint64_t kMaxBatch = 1 << 16;  // records
// The smallest batch of a rotating stream: what a file may pass rotate_bytes
// by, beside its closing counts packet.
constexpr uint64_t kMinRotateBatch = 64;  // records
}  // namespace

std::string TraceStream::numbered(const std::string& path, uint64_t n) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const size_t cut = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)
                         ? dot
                         : path.size();
  return path.substr(0, cut) + "-" + std::to_string(n) + path.substr(cut);
}

std::unique_ptr<TraceStream> TraceStream::start(std::shared_ptr<Tracer> tracer, StreamOptions options,
                                                std::function<void()> on_error, StreamStatus* error) {
  std::unique_ptr<TraceStream> s(new TraceStream(std::move(tracer), std::move(options), std::move(on_error)));
  if (!s->cursor_) {
    s->fail(EBUSY, "cursor", s->options_.path);
  } else {
    s->open_file();
  }
  if (s->status_.error != 0) {
    *error = s->status_;
    return nullptr;
  }
  s->running_ = true;
  try {
    s->thread_ = std::thread([p = s.get()] { p->run(); });
  } catch (const std::system_error& e) {
    s->running_ = false;
    s->fail(e.code().value() != 0 ? e.code().value() : EAGAIN, "thread", s->options_.path);
    *error = s->status_;
    return nullptr;
  }
  return s;
}

TraceStream::TraceStream(std::shared_ptr<Tracer> tracer, StreamOptions options, std::function<void()> on_error)
    : tracer_(std::move(tracer)),
      options_(std::move(options)),
      on_error_(std::move(on_error)),
      cursor_(RecordCursor::open(tracer_)),
      sink_(new FileSink()) {}

TraceStream::~TraceStream() { close(); }

void TraceStream::fail(int err, const char* op, const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.error != 0) return;
    status_.error = err;
    status_.error_op = op;
    status_.error_path = path;
  }
  // The slot goes before the batch's pins: a chunk read but not written is
  // then never counted released (it stays kept, under the budget's policy).
  cursor_.reset();
  batch_.timelines.clear();
  sink_->close_file();
  if (on_error_ && running_) on_error_();
}

bool TraceStream::open_file() {
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = ++status_.files;
  }
  const std::string path = options_.rotate_bytes != 0 ? numbered(options_.path, n) : options_.path;
  if (const int err = sink_->open_file(path)) {
    fail(err, "open", path);
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.file = path;
  }
  if (options_.keep != 0 && n > options_.keep) ::unlink(numbered(options_.path, n - options_.keep).c_str());
  if (!writer_) {
    writer_.reset(new PerfettoWriter(DocumentInfo{tracer_->origin_ns(), read_clocks(), {}}, *sink_));
  } else {
    writer_->restart();
  }
  return true;
}

DocumentCounts TraceStream::counts_now() const {
  RecordCounts sum;
  for (const TimelineCounts& t : tracer_->counts()) sum += t.counts;
  DocumentCounts c = document_counts(sum);
  std::lock_guard<std::mutex> lock(mu_);
  c.values.emplace_back("stream_written", status_.written);
  c.values.emplace_back("stream_missed", status_.missed);
  return c;
}

void TraceStream::finish_file() {
  writer_->set_counts(counts_now());
  writer_->finish();
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    path = status_.file;
    status_.bytes = sink_->total_bytes();
  }
  if (sink_->error() != 0) {
    fail(sink_->error(), "write", path);
  } else if (const int err = sink_->close_file()) {
    fail(err, "close", path);
  }
}

uint64_t TraceStream::batch_limit() const {
  if (options_.rotate_bytes == 0) return kMaxBatch;
  // Half the room left in the file at the bytes per record written so far
  // (a guess of 64 before the first batch), so the file closes in on
  // rotate_bytes and passes it by at most one kMinRotateBatch batch. Only
  // this thread writes status_.written: no lock to read it here.
  const uint64_t used = rotate_due_ ? 0 : sink_->file_bytes();  // the next file opens with this batch
  const uint64_t room = used < options_.rotate_bytes ? options_.rotate_bytes - used : 0;
  const uint64_t written = status_.written;
  const uint64_t per_record = written != 0 ? std::max<uint64_t>(sink_->total_bytes() / written, 1) : 64;
  return std::min(std::max(room / 2 / per_record, kMinRotateBatch), kMaxBatch);
}

void TraceStream::pump() {
  tracer_->flush();
  for (int round = 0; round < kBatchesPerRound && cursor_ && cursor_->next(batch_, batch_limit()); ++round) {
    uint64_t n = 0;
    for (const FrozenTimeline& tl : batch_.timelines) n += tl.records.size();
    if (rotate_due_) {
      if (!open_file()) {
        std::lock_guard<std::mutex> lock(mu_);
        status_.unwritten += n;
        return;
      }
      rotate_due_ = false;
    }
    writer_->append(batch_);
    if (sink_->error() != 0) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        status_.unwritten += n;
        status_.bytes = sink_->total_bytes();
      }
      fail(sink_->error(), "write", status().file);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_.written += n;
      status_.missed = cursor_->missed();
      status_.bytes = sink_->total_bytes();
    }
    if (options_.rotate_bytes != 0 && sink_->file_bytes() >= options_.rotate_bytes) {
      finish_file();
      if (!cursor_) return;
      rotate_due_ = true;
    }
  }
  // Unpinned between rounds: written chunks may go back to the budget.
  batch_.timelines.clear();
}

void TraceStream::run() {
  for (;;) {
    bool stopping;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wanted_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                       [this] { return stop_ || woken_; });
      stopping = stop_;
      woken_ = false;
    }
    pump();
    if (stopping) break;
  }
  // What committed before close(): the rounds above may have left some.
  for (int i = 0; i < 1024 && cursor_; ++i) {
    const uint64_t before = status().written;
    pump();
    if (status().written == before) break;
  }
  if (cursor_ && !rotate_due_) finish_file();
  cursor_.reset();
  std::lock_guard<std::mutex> lock(mu_);
  status_.closed = true;
}

void TraceStream::close() {
  std::lock_guard<std::mutex> closing(close_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wanted_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TraceStream::wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  wanted_.notify_all();
}

StreamStatus TraceStream::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

}  // namespace hotspan
