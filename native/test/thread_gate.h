// A worker thread that runs steps on demand, so a test can inspect the
// tracer between a live thread's steps (and only then let it exit).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace test_util {

class StepThread {
 public:
  StepThread() : thread_([this] { loop(); }) {}
  ~StepThread() { stop(); }

  // Runs fn on the worker and waits for it to finish.
  void run(std::function<void()> fn) {
    std::unique_lock<std::mutex> lock(mu_);
    job_ = std::move(fn);
    cv_.notify_all();
    cv_.wait(lock, [this] { return !job_; });
  }
  // Lets the worker exit and joins it (its thread_locals are destroyed).
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done_) return;
      done_ = true;
      cv_.notify_all();
    }
    thread_.join();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return done_ || job_; });
      if (job_) {
        job_();
        job_ = nullptr;
        cv_.notify_all();
        continue;
      }
      return;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace test_util
