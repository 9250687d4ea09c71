#include "write_file.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "arg_check.h"
#include "read/trace_keep.h"
#include "write/chrome_json_writer.h"
#include "write/file_block_writer.h"
#include "write/perfetto_writer.h"

namespace hotspan_addon {

namespace {

enum class Format { kChromeJson, kPerfetto };

// Passes a writer's output to the file, counting its bytes for the summary
// writeFile resolves with (blocks are handed on, not copied).
class CountingSink : public hotspan::BlockSink {
 public:
  explicit CountingSink(hotspan::BlockSink& out) : BlockSink(out.block_bytes()), out_(out) {}
  void take(const char* data, size_t n) override {
    bytes_ += n;
    out_.take(data, n);
  }
  void take_block(std::string& block, size_t n) override {
    bytes_ += n;
    out_.take_block(block, n);
  }
  uint64_t bytes() const { return bytes_; }

 private:
  hotspan::BlockSink& out_;
  uint64_t bytes_ = 0;
};

// process.exit() does not wait for the libuv thread pool: a write that has
// opened (and truncated) its file would be cut short. An atexit handler waits
// for writes under way (bounded), so a file being written is complete; a
// write still queued never opened its file, which stays as it was.
struct RunningWrites {
  std::mutex mu;
  std::condition_variable done;
  int running = 0;
};
RunningWrites& Running() {
  static auto* r = new RunningWrites;  // leaked: used by the atexit handler
  return *r;
}
constexpr auto kExitWait = std::chrono::seconds(30);

void WaitForWritesAtExit() {
  RunningWrites& r = Running();
  std::unique_lock<std::mutex> lock(r.mu);
  r.done.wait_for(lock, kExitWait, [&r] { return r.running == 0; });
}

void RegisterExitWait() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(WaitForWritesAtExit); });
}

// A tracer's sampling (read/trace_keep.h), read on the JS thread with the
// freeze: a write of a sampling tracer holds its kept traces only.
struct Sampling {
  uint64_t salt = 0, sampler = 0, keep = 0;
  std::vector<std::string> keep_names;
  bool on = false;
  explicit Sampling(const hotspan::Tracer& t)
      : salt(t.id_salt()), sampler(t.sampler()), keep(t.keep()), keep_names(t.keep_names()),
        on(hotspan::TraceKeep::samples(sampler, keep, keep_names)) {}
};

uint64_t RecordsOf(const hotspan::FrozenSnapshot& snapshot) {
  uint64_t n = 0;
  for (const auto& t : snapshot.timelines) n += t.records.size();
  return n;
}

// Formats `snapshot` as `format` into `path` through a FileBlockWriter: at
// most its few blocks in memory, whatever the trace's size (a sampling
// tracer's kept traces are copied first: kept_snapshot). Returns 0 or the
// errno of the step *op names; *bytes is what the writer took, *spans the
// records written.
int WriteTrace(const hotspan::FrozenSnapshot& snapshot, const Sampling& sampling, int64_t origin_ns,
               const std::string& process_name, const hotspan::ClockReadings& clocks, const std::string& path,
               Format format, uint64_t* bytes, uint64_t* spans, const char** op, uint64_t dropped_elsewhere = 0) {
  hotspan::FileBlockWriter file(path);
  CountingSink out(file);
  hotspan::RecordCounts counts = hotspan::total_counts(snapshot);
  counts.produced += dropped_elsewhere;
  counts.dropped += dropped_elsewhere;
  hotspan::DocumentInfo doc =
      hotspan::DocumentInfo{origin_ns, clocks, hotspan::document_counts(counts)}.of_process(hotspan::current_pid(), process_name);
  if (sampling.on) {
    uint64_t left_out = 0;
    const hotspan::Snapshot kept = hotspan::kept_snapshot(snapshot, sampling.salt, sampling.sampler, sampling.keep,
                                                          sampling.keep_names, &left_out);
    doc.counts.values.emplace_back("sampled_out", left_out);
    *spans = 0;
    for (const auto& t : kept.timelines) *spans += t.records.size();
    if (format == Format::kChromeJson) {
      hotspan::write_chrome_json(kept, doc, out);
    } else {
      hotspan::write_perfetto(kept, doc, out);
    }
  } else {
    *spans = RecordsOf(snapshot);
    if (format == Format::kChromeJson) {
      hotspan::write_chrome_json(snapshot, doc, out);
    } else {
      hotspan::write_perfetto(snapshot, doc, out);
    }
  }
  const int err = file.finish(op);
  *bytes = out.bytes();
  return err;
}

Format FormatArg(const Napi::CallbackInfo& info, const std::string& format) {
  if (format == "json") return Format::kChromeJson;
  if (format == "perfetto") return Format::kPerfetto;
  throw Napi::RangeError::New(info.Env(), "hotspan: format must be \"json\" or \"perfetto\", got \"" +
                                              format + "\"");
}

void CheckPath(const Napi::CallbackInfo& info, const std::string& path) {
  if (path.empty() || path.find('\0') != std::string::npos) {
    throw Napi::TypeError::New(info.Env(), "hotspan: path must be a non-empty file path without NUL bytes");
  }
}

Napi::Object Summary(Napi::Env env, uint64_t bytes, uint64_t spans, size_t timelines) {
  // What the file holds: its size and the records frozen into it.
  Napi::Object summary = Napi::Object::New(env);
  summary.Set("bytes", Napi::Number::New(env, static_cast<double>(bytes)));
  summary.Set("spans", Napi::Number::New(env, static_cast<double>(spans)));
  summary.Set("timelines", Napi::Number::New(env, static_cast<double>(timelines)));
  return summary;
}

// The trace is frozen on the JS thread when write() is called, so the file
// holds exactly what was committed then; freezing copies only chunk
// pointers (see frozen_records.h), and reading the records, formatting them
// and the file writes (overlapped, see FileBlockWriter) run on the worker.
class WriteWorker : public Napi::AsyncWorker {
 public:
  WriteWorker(Napi::Env env, hotspan::FrozenSnapshot snapshot, Sampling sampling, int64_t origin_ns,
              std::string process_name, std::string path, Format format)
      : Napi::AsyncWorker(env, "hotspan.write"),
        deferred_(Napi::Promise::Deferred::New(env)),
        snapshot_(std::move(snapshot)),
        sampling_(std::move(sampling)),
        origin_ns_(origin_ns),
        process_name_(std::move(process_name)),
        clocks_(hotspan::read_clocks()),
        path_(std::move(path)),
        format_(format) {
    spans_ = RecordsOf(snapshot_);
    timelines_ = snapshot_.timelines.size();
  }

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    RunningWrites& r = Running();
    {
      std::lock_guard<std::mutex> lock(r.mu);
      ++r.running;
    }
    Write();
    {
      std::lock_guard<std::mutex> lock(r.mu);
      --r.running;
    }
    r.done.notify_all();
  }

  void Write() {
    errno_ = WriteTrace(snapshot_, sampling_, origin_ns_, process_name_, clocks_, path_, format_, &bytes_, &spans_, &op_);
    snapshot_ = hotspan::FrozenSnapshot();  // release it here, not on the JS thread
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (errno_ == 0) {
      deferred_.Resolve(Summary(env, bytes_, spans_, timelines_));
      return;
    }
    deferred_.Reject(FileError(env, path_, errno_, op_).Value());
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  hotspan::FrozenSnapshot snapshot_;
  const Sampling sampling_;
  const int64_t origin_ns_;
  const std::string process_name_;
  const hotspan::ClockReadings clocks_;  // read with the freeze, on the calling thread
  const std::string path_;
  const Format format_;
  uint64_t spans_ = 0;
  size_t timelines_ = 0;
  uint64_t bytes_ = 0;
  int errno_ = 0;
  const char* op_ = "";
};

}  // namespace

Napi::Error FileError(Napi::Env env, const std::string& path, int err, const std::string& op) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  const char* name = strerrorname_np(err);
  const char* code = name != nullptr ? name : "EIO";
#else
  const char* code = "EIO";
#endif
  // Shaped like Node's fs errors (code, errno, syscall, path), with the path in the text.
  Napi::Error e = Napi::Error::New(env, std::string("hotspan: cannot write \"") + path + "\": " + code +
                                            ": " + std::strerror(err) + " (" + op + ")");
  e.Set("code", Napi::String::New(env, code));
  e.Set("errno", Napi::Number::New(env, -err));
  e.Set("syscall", Napi::String::New(env, op));
  e.Set("path", Napi::String::New(env, path));
  return e;
}

Napi::Value WriteFile(const Napi::CallbackInfo& info, TracerBinding& self) {
  std::string path = ARG_STRING(0, "path");
  const Format f = FormatArg(info, ARG_STRING(1, "format"));
  CheckPath(info, path);
  RegisterExitWait();
  auto* worker = new WriteWorker(info.Env(), self.tracer->freeze(), Sampling(*self.tracer), self.tracer->origin_ns(),
                                 self.tracer->process_name(), std::move(path), f);
  Napi::Promise promise = worker->Promise();
  worker->Queue();  // deletes itself after OnOK / OnError
  return promise;
}

Napi::Value WriteFileNow(const Napi::CallbackInfo& info, TracerBinding& self) {
  const std::string path = ARG_STRING(0, "path");
  const Format f = FormatArg(info, ARG_STRING(1, "format"));
  CheckPath(info, path);
  // Records produced outside the tracer and dropped there (hotspan/auto's
  // recorder past its limit): the file's counts add them to produced and dropped.
  uint64_t dropped_elsewhere = 0;
  if (info.Length() > 2 && !info[2].IsUndefined()) {
    const double d = info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : -1;
    if (!(d >= 0 && d <= 9007199254740991.0) || std::floor(d) != d) {
      throw Napi::RangeError::New(info.Env(), "hotspan: droppedElsewhere must be a non-negative integer, got " +
                                                  info[2].ToString().Utf8Value());
    }
    dropped_elsewhere = static_cast<uint64_t>(d);
  }
  const hotspan::Tracer& tracer = *self.tracer;
  uint64_t bytes = 0;
  const char* op = "";
  uint64_t spans = 0;
  size_t timelines = 0;
  int err = 0;
  {
    const hotspan::FrozenSnapshot snapshot = tracer.freeze();
    timelines = snapshot.timelines.size();
    err = WriteTrace(snapshot, Sampling(tracer), tracer.origin_ns(), tracer.process_name(), hotspan::read_clocks(), path,
                     f, &bytes, &spans, &op, dropped_elsewhere);
  }
  if (err != 0) throw FileError(info.Env(), path, err, op);
  return Summary(info.Env(), bytes, spans, timelines);
}

}  // namespace hotspan_addon
