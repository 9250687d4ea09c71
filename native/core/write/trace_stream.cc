#include "write/trace_stream.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <system_error>
#include <utility>

#include "record/clock_readings.h"
#include "write/file_block_writer.h"

namespace hotspan {

// The current file: a FileBlockWriter (1 MiB blocks, written on a thread of
// its own while the stream's thread formats the next ones). Bytes are
// counted twice: handed (what the file will hold: rotation goes by it) and
// written (what write() has taken: a batch is written only then).
class TraceStream::FileSink : public BlockSink {
 public:
  FileSink() : BlockSink(FileBlockWriter::kBlockBytes) {}
  ~FileSink() override {
    const char* op;
    close_file(&op);
  }

  // 0 or errno, *op the failed step ("open", "thread").
  int open_file(const std::string& path, const char** op) {
    file_.reset(new FileBlockWriter(path));
    file_bytes_ = 0;
    return file_->error(op);
  }
  // Writes what is queued and closes: 0 or the file's first errno.
  int close_file(const char** op) {
    *op = nullptr;
    if (!file_) return 0;
    const int err = file_->finish(op);
    closed_bytes_ += file_->written();
    file_.reset();
    return err;
  }
  void take(const char* data, size_t n) override {
    if (!file_) return;
    file_->take(data, n);
    handed(n);
  }
  void take_block(std::string& block, size_t n) override {
    if (!file_) return;
    file_->take_block(block, n);
    handed(n);
  }
  // The current file's first error so far (0: none).
  int error(const char** op) const {
    *op = nullptr;
    return file_ ? file_->error(op) : 0;
  }
  // Waits for the current file's queued blocks; its first error.
  int drain(const char** op) {
    *op = nullptr;
    return file_ ? file_->drain(op) : 0;
  }
  uint64_t file_bytes() const { return file_bytes_; }        // handed to this file
  uint64_t handed_bytes() const { return handed_bytes_; }    // to every file
  uint64_t written_bytes() const { return closed_bytes_ + (file_ ? file_->written() : 0); }

 private:
  void handed(size_t n) {
    file_bytes_ += n;
    handed_bytes_ += n;
  }
  std::unique_ptr<FileBlockWriter> file_;
  uint64_t file_bytes_ = 0;
  uint64_t handed_bytes_ = 0;
  uint64_t closed_bytes_ = 0;  // written to the files already closed
};

namespace {
// Batches read per wake-up before the thread looks at its stop flag again.
constexpr int kBatchesPerRound = 64;
constexpr uint64_t kMaxBatch = 1 << 16;  // records
// About the bytes a batch takes in the file (a file block's): a batch counts
// written only once write() took all of it, so after a failure (a full disk)
// the file may hold decodable spans of one batch beyond `written`, about this
// many bytes' worth. Smaller batches cost drain throughput: 256 KiB ones
// drained 2M spans at 12M spans/s against 22M at 65,536 records; 1 MiB ones
// at 22-26M against 29M (bench/cases/stream.mjs, alternating runs).
constexpr uint64_t kBatchBytes = 1 << 20;
constexpr uint64_t kMinBatch = 64;  // records
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
      sink_(new FileSink()) {
  if (TraceKeep::samples(tracer_->sampler(), tracer_->keep(), tracer_->keep_names())) {
    keep_.reset(new TraceKeep(tracer_->id_salt(), tracer_->sampler(), tracer_->keep()));
    for (const std::string& name : tracer_->keep_names()) keep_->keep_name(name);
  }
}

TraceStream::~TraceStream() { close(); }

void TraceStream::fail(int err, const char* op, const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.error != 0) return;
    status_.error = err;
    status_.error_op = op;
    status_.error_path = path;
  }
  // The slot goes before the batches' pins: a chunk read but not written is
  // then never counted released (it stays kept, under the budget's policy).
  cursor_.reset();
  uint64_t lost = 0;
  for (const InFlight& b : in_flight_) lost += b.records;
  if (keep_) lost += keep_->held();  // read, waiting for their trace's decision: never written now
  keep_.reset();
  in_flight_.clear();
  batch_.timelines.clear();
  const char* ignored;
  sink_->close_file(&ignored);
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.unwritten += lost;
    status_.waiting = 0;
    status_.bytes = sink_->written_bytes();
  }
  if (on_error_ && running_) on_error_();
}

bool TraceStream::open_file() {
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = ++status_.files;
  }
  const std::string path = options_.rotate_bytes != 0 ? numbered(options_.path, n) : options_.path;
  const char* op;
  if (const int err = sink_->open_file(path, &op)) {
    fail(err, op, path);
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.file = path;
  }
  if (options_.keep != 0 && n > options_.keep) ::unlink(numbered(options_.path, n - options_.keep).c_str());
  if (!writer_) {
    writer_.reset(new PerfettoWriter(DocumentInfo{tracer_->origin_ns(), read_clocks(), {}}.of_process(current_pid(), tracer_->process_name()), *sink_));
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
  if (keep_) c.values.emplace_back("stream_sampled_out", status_.sampled_out);
  return c;
}

bool TraceStream::retire() {
  const uint64_t done = sink_->written_bytes();
  uint64_t n = 0;
  // Popping unpins: the batch's chunks may go back to the budget.
  while (!in_flight_.empty() && in_flight_.front().end <= done) {
    n += in_flight_.front().records;
    in_flight_.pop_front();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.written += n;
    status_.bytes = done;
  }
  const char* op;
  if (const int err = sink_->error(&op)) {
    fail(err, op, status().file);
    return false;
  }
  return true;
}

bool TraceStream::settle() {
  const char* op;
  sink_->drain(&op);  // its error is retire()'s
  return retire();
}

void TraceStream::finish_file() {
  // The counts packet says what the file holds: every batch in it written first.
  if (!settle()) return;
  writer_->set_counts(counts_now());
  writer_->finish();
  const std::string path = status().file;
  const char* op;
  const int err = sink_->close_file(&op);
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.bytes = sink_->written_bytes();
  }
  if (err != 0) fail(err, op, path);
}

uint64_t TraceStream::batch_limit() const {
  // At the bytes per record handed so far (a guess of 64 before the first batch).
  const uint64_t per_record =
      handed_records_ != 0 ? std::max<uint64_t>(sink_->handed_bytes() / handed_records_, 1) : 64;
  const uint64_t limit = std::min(std::max(kBatchBytes / per_record, kMinBatch), kMaxBatch);
  if (options_.rotate_bytes == 0) return limit;
  // Half the room left in the file, so the file closes in on rotate_bytes and
  // passes it by at most one kMinRotateBatch batch.
  const uint64_t used = rotate_due_ ? 0 : sink_->file_bytes();  // the next file opens with this batch
  const uint64_t room = used < options_.rotate_bytes ? options_.rotate_bytes - used : 0;
  return std::min(std::max(room / 2 / per_record, kMinRotateBatch), limit);
}

void TraceStream::pump() {
  tracer_->flush();
  int round = 0;
  for (; round < kBatchesPerRound && cursor_ && cursor_->next(batch_, batch_limit()); ++round) {
    uint64_t n = 0;
    for (const FrozenTimeline& tl : batch_.timelines) n += tl.records.size();
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_.missed = cursor_->missed();
    }
    if (rotate_due_) {
      if (!open_file()) {
        std::lock_guard<std::mutex> lock(mu_);
        status_.unwritten += n;
        return;
      }
      rotate_due_ = false;
    }
    uint64_t taken = n;
    if (keep_) {
      taken = sort_batch(false);
      writer_->append(sorted_);
    } else {
      writer_->append(batch_);
    }
    handed_records_ += n;
    // Pinned until write() has its last byte (the append handed it whole).
    in_flight_.push_back(InFlight{sink_->handed_bytes(), taken, std::move(batch_.timelines)});
    batch_.timelines.clear();
    if (!retire()) return;
    if (options_.rotate_bytes != 0 && sink_->file_bytes() >= options_.rotate_bytes) {
      finish_file();
      if (!cursor_) return;
      rotate_due_ = true;
    }
  }
  // Nothing new: records waiting for their trace's decision still get it
  // (the watermark moved, or maxWait passed).
  if (round == 0 && cursor_) release_waiting(false);
  // Every batch written before the thread waits again: none stays pinned
  // between rounds, and status() is current.
  if (cursor_) settle();
  batch_.timelines.clear();
}

uint64_t TraceStream::sort_batch(bool final) {
  for (size_t i = keep_->names(); i < batch_.names.size(); ++i) keep_->add_name(batch_.names[i]);
  Snapshot in;
  static const std::vector<uint32_t> kNone;
  // Per timeline of batch_ (the cursor's last batch): the records another output read first.
  const std::vector<uint32_t>& first_read = cursor_ ? cursor_->first_read() : kNone;
  for (size_t k = 0; k < batch_.timelines.size(); ++k) {
    const FrozenTimeline& tl = batch_.timelines[k];
    described_[tl.id] = Described{tl.name, tl.kind, tl.serial, tl.exited};
    SnapshotTimeline& bt = keep_->timeline(in, tl.id, tl.kind);
    const auto held_here = static_cast<uint32_t>(bt.records.size());
    if (k < first_read.size()) keep_->read_first_elsewhere(in.timelines.size() - 1, held_here, held_here + first_read[k]);
    bt.records.reserve(bt.records.size() + tl.records.size());
    for (uint32_t i = 0; i < tl.records.size(); ++i) bt.records.push_back(tl.records[i]);
    bt.attrs.insert(bt.attrs.end(), tl.attrs.begin(), tl.attrs.end());
    bt.foreign_parents.insert(bt.foreign_parents.end(), tl.foreign_parents.begin(), tl.foreign_parents.end());
    bt.contexts.insert(bt.contexts.end(), tl.contexts.begin(), tl.contexts.end());
  }
  // The whole name table, as the writer takes it (a final sort reads no batch: the last one's).
  if (!batch_.names.empty()) sorted_.names = batch_.names;
  sorted_.timelines.clear();
  std::vector<size_t> at;  // in.timelines index -> sorted_.timelines index + 1 (0: none yet)
  const TraceKeep::Result r = keep_->sort(
      in, !final, SIZE_MAX, final, final ? INT64_MAX : cursor_->read_through_ns(), [&](const TraceKeep::Kept& k) {
        if (at.size() <= k.timeline) at.resize(in.timelines.size(), 0);
        if (at[k.timeline] == 0) {
          SnapshotTimeline& o = sorted_.timelines.emplace_back();
          o.id = in.timelines[k.timeline].id;
          const Described& d = described_[o.id];
          o.name = d.name;
          o.kind = d.kind;
          o.serial = d.serial;
          o.exited = d.exited;
          at[k.timeline] = sorted_.timelines.size();
        }
        SnapshotTimeline& o = sorted_.timelines[at[k.timeline] - 1];
        o.records.push_back(*k.record);
        if (k.attrs != nullptr) o.attrs.emplace_back(k.record->local_id, *k.attrs);
        if ((k.record->flags & kFlagParentElsewhere) != 0) o.foreign_parents.emplace_back(k.record->local_id, k.foreign);
      });
  tracer_->count_sampled_out(r.sampled_out_first);
  std::lock_guard<std::mutex> lock(mu_);
  status_.sampled_out += r.sampled_out;
  status_.keep_timed_out += r.keep_timed_out;
  status_.waiting = r.waiting;
  return r.taken;
}

void TraceStream::release_waiting(bool final) {
  if (!keep_ || keep_->held() == 0) return;
  batch_.timelines.clear();
  const uint64_t taken = sort_batch(final);
  if (taken == 0) return;
  if (rotate_due_) {
    if (!open_file()) {
      std::lock_guard<std::mutex> lock(mu_);
      status_.unwritten += taken;
      return;
    }
    rotate_due_ = false;
  }
  writer_->append(sorted_);
  in_flight_.push_back(InFlight{sink_->handed_bytes(), taken, {}});
  retire();
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
    // Progress is what the cursor read (a sampling stream may write none of it).
    const uint64_t before = cursor_->delivered();
    pump();
    if (!cursor_ || cursor_->delivered() == before) break;
  }
  if (cursor_) release_waiting(true);
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
