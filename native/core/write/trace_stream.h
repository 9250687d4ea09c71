// A tracer streamed to disk as it records: a thread of its own reads the
// committed records through a RecordCursor (record_cursor.h) every
// interval, and feeds them to the incremental PerfettoWriter, which writes
// whole length-framed packets, so a file cut anywhere decodes up to its last
// whole packet. The bytes go to the file in 1 MiB write()s from a second
// thread (FileBlockWriter), which writes one block while the stream's thread
// formats the next. Recording threads never wait for either: what the disk
// cannot keep up with is left to the budget's policy and counted (the
// cursor's misses). A batch's chunks go back to the budget (released) once
// write() has taken its last byte; every round of reads ends with the file
// holding all it was handed. The blocks in flight are outside the budget, as
// a write()'s are: at most FileBlockWriter::kInFlight + 2 (about 6 MiB),
// kept for reuse once a burst has made them.
//
// Files: without rotation, `path`. With rotate_bytes, `<stem>-1<ext>`,
// `<stem>-2<ext>`, ...: a file is finished and the next begun once it holds
// rotate_bytes, keeping the newest `keep` (0: all). Batches are sized to
// half the room left in the file, so a file passes rotate_bytes by at most
// one batch of 64 records and its closing counts packet. Each file stands alone: its
// own clock, interned names and track descriptors (PerfettoWriter::restart).
// Every finished file ends with the counts packet (document_info.h): the
// tracer's counts then, plus stream_written and stream_missed.
//
// A failed write or open ends the streaming: the error is kept (status()),
// on_error runs once on the stream's thread, and the stream gives up its
// cursor, so the records it did not write stay in memory under the budget's
// policy. Recording goes on.
//
// A tracer that samples (TraceKeep::samples: a head sampler other than
// parentbased_always_on, or a tail keep) streams only its kept traces: each
// batch goes through the tracer's sampling decision (read/trace_keep.h)
// before the writer, as the OTLP export's does. Records of traces not kept
// are counted (StreamStatus::sampled_out; tracer-wide once over every output:
// Tracer::count_sampled_out), never written; records whose
// trace is not decided yet wait as copies (at most TraceKeep::kMaxHeld, each
// at most maxWait, then decided by the head sampler alone and counted in
// keep_timed_out), and close() decides those still waiting the same way.
// Per stream: records read = written + sampled_out + waiting + unwritten.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "write/document_info.h"
#include "write/perfetto_writer.h"
#include "read/record_cursor.h"
#include "read/trace_keep.h"
#include "record/tracer.h"

namespace hotspan {

struct StreamOptions {
  std::string path;
  uint64_t rotate_bytes = 0;  // 0: no rotation
  uint32_t keep = 0;          // rotated files kept, newest first (0: all)
  int interval_ms = 50;       // how often the thread reads what committed
};

struct StreamStatus {
  uint64_t bytes = 0;      // written to every file so far (what write() took)
  uint64_t files = 0;      // files begun
  // Records in batches the file has wholly taken (write() returned). After a
  // failed write the file may also hold spans of the batch it cut short
  // (batches are about 1 MiB of file): `bytes` says how much it holds.
  uint64_t written = 0;
  uint64_t missed = 0;     // records the budget recycled before the stream read them
  uint64_t unwritten = 0;  // records read but not wholly written: the batches in flight, and those waiting, at a failure
  uint64_t sampled_out = 0;     // records of traces the tracer's sampling did not keep: read, never written
  uint64_t keep_timed_out = 0;  // records the tail keep released without their root (TraceKeep::Result)
  uint64_t waiting = 0;         // records read whose trace is not decided yet (held as copies)
  std::string file;        // the file being written (or the last one)
  bool closed = false;
  // The first failure: errno, the step ("open", "write", "close", "cursor")
  // and the file. 0: none.
  int error = 0;
  std::string error_op;
  std::string error_path;
};

class TraceStream {
 public:
  // Opens the first file and starts the thread; on failure returns nullptr
  // with *error filled (its error/error_op/error_path).
  static std::unique_ptr<TraceStream> start(std::shared_ptr<Tracer> tracer, StreamOptions options,
                                            std::function<void()> on_error, StreamStatus* error);
  ~TraceStream();  // close()
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;

  // Writes what is committed now (native threads' queued records flushed
  // first), finishes the file and ends the thread. Idempotent; blocks.
  void close();
  // Reads now rather than at the next interval.
  void wake();
  StreamStatus status() const;

  // `<stem>-<n><ext>` of a rotating stream's path.
  static std::string numbered(const std::string& path, uint64_t n);

 private:
  class FileSink;
  TraceStream(std::shared_ptr<Tracer> tracer, StreamOptions options, std::function<void()> on_error);
  bool open_file();    // the next file; false (and failed) when it cannot
  void finish_file();  // counts packet, close
  void pump();         // every batch committed now
  // Counts the batches the file has wholly taken written (and unpins them);
  // false (and failed) on a write error.
  bool retire();
  bool settle();  // retire() once every batch handed over is written
  // Sampling: batch_ (empty at close(): `final`) through keep_ into sorted_,
  // the kept records only; returns how many.
  uint64_t sort_batch(bool final);
  // Sampling, with nothing new to read: the records waiting whose trace is
  // decided now (or past maxWait; `final`, at close(): all) written.
  void release_waiting(bool final);
  uint64_t batch_limit() const;  // records of the next batch
  void run();
  void fail(int err, const char* op, const std::string& path);
  DocumentCounts counts_now() const;

  const std::shared_ptr<Tracer> tracer_;
  const StreamOptions options_;
  const std::function<void()> on_error_;
  std::unique_ptr<RecordCursor> cursor_;  // the thread's; null after a failure
  std::unique_ptr<FileSink> sink_;        // the thread's
  std::unique_ptr<PerfettoWriter> writer_;
  FrozenSnapshot batch_;
  // Sampling (null: the tracer does not sample, every record is written).
  std::unique_ptr<TraceKeep> keep_;
  Snapshot sorted_;  // a batch's kept records, for the writer
  // The timelines seen, as the writer describes them (a held record's
  // timeline may have nothing new in the batch that takes it).
  struct Described {
    std::string name;
    TimelineKind kind = TimelineKind::kJs;
    bool serial = false;
    bool exited = false;
  };
  std::unordered_map<uint32_t, Described> described_;
  // Batches handed to the file that write() has not wholly taken yet; their
  // chunks stay pinned (not released) until then. Bounded by the file
  // writer's queue (FileBlockWriter::kInFlight blocks).
  struct InFlight {
    uint64_t end;  // FileSink::handed_bytes() after the batch
    uint64_t records;
    std::vector<FrozenTimeline> timelines;  // the pins
  };
  std::deque<InFlight> in_flight_;
  uint64_t handed_records_ = 0;  // records of every batch handed over
  // A file reached rotate_bytes and was finished: the next one opens with the
  // next batch, so no file is left without spans (thread's own).
  bool rotate_due_ = false;

  mutable std::mutex mu_;
  std::condition_variable wanted_;
  bool running_ = false;  // the thread was started (set before it): on_error may run
  bool stop_ = false;   // guarded by mu_
  bool woken_ = false;  // guarded by mu_
  StreamStatus status_;  // guarded by mu_
  std::mutex close_mu_;  // one closer at a time
  std::thread thread_;
};

}  // namespace hotspan
