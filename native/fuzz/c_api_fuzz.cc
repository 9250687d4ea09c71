// C ABI call sequences from several threads: the input is split into three
// native threads' programs (intern, begin, end, track, async spans begun on
// one thread and ended on another or twice, thread names, flush_thread, bad
// pointers and ids) while the main thread drains, and maybe closes the
// tracer midway. Every status must be one of the four; with no close,
// every OK end() and async_end() is exactly one committed span, every
// interned id names its string, and the outputs decode.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "record/c_api.h"
#include "fuzz_input.h"
#include "hotspan.h"
#include "record/span_record.h"
#include "record/tracer.h"
#include "write_outputs.h"

namespace {

constexpr int kThreads = 3;
constexpr size_t kSlots = 8;

struct Op {
  uint8_t code, a, b;
  std::string s;
};

struct Shared {
  const hotspan_api_v1* api = nullptr;
  std::array<std::atomic<uint32_t>, kSlots> names{}, tracks{};
  std::array<std::atomic<uint64_t>, kSlots> tokens{};
  std::atomic<uint64_t> ok_ends{0}, ok_async_ends{0};
  std::array<std::atomic<uint64_t>, kSlots> interned_len{};  // length of the string a name slot holds, +1
};

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "c_api_fuzz: %s\n", what);
    std::abort();
  }
}

void check_status(hotspan_status s) {
  require(s == HOTSPAN_OK || s == HOTSPAN_CLOSED || s == HOTSPAN_NO_OPEN_SPAN || s == HOTSPAN_INVALID,
          "a status outside the four");
}

void run(Shared& sh, const std::vector<Op>& program) {
  const hotspan_api_v1* api = sh.api;
  void* t = api->tracer;
  for (const Op& op : program) {
    hotspan_status s = HOTSPAN_OK;
    switch (op.code % 11) {
      case 0: {
        uint32_t id = 0;
        s = api->intern(t, op.s.data(), op.s.size(), &id);
        if (s == HOTSPAN_OK) sh.names[op.a % kSlots].store(id);
        break;
      }
      case 1: s = api->begin(t, sh.names[op.a % kSlots].load()); break;
      case 2: s = api->begin(t, static_cast<uint32_t>(op.a) << 8 | op.b); break;  // maybe unknown
      case 3:
        s = api->end(t);
        if (s == HOTSPAN_OK) sh.ok_ends.fetch_add(1);
        break;
      case 4: {
        uint32_t track = 0;
        s = api->track(t, op.s.data(), op.s.size(), op.b & 1, &track);
        if (s == HOTSPAN_OK) sh.tracks[op.a % kSlots].store(track);
        break;
      }
      case 5: {
        uint64_t token = 0;
        s = api->async_begin(t, sh.tracks[op.a % kSlots].load(), sh.names[op.b % kSlots].load(), &token);
        if (s == HOTSPAN_OK) sh.tokens[op.a % kSlots].store(token);
        break;
      }
      case 6:
        s = api->async_end(t, sh.tokens[op.a % kSlots].load());
        if (s == HOTSPAN_OK) sh.ok_async_ends.fetch_add(1);
        break;
      case 7: s = api->set_thread_name(t, op.s.data(), op.s.size()); break;
      case 8: s = api->flush_thread(t); break;
      case 9:  // not a tracer: rejected, never read through
        s = api->begin(op.a & 1 ? nullptr : static_cast<void*>(&sh), 0);
        require(s == HOTSPAN_INVALID, "a bad tracer pointer was not rejected");
        break;
      case 10: {
        const double ms = api->now_ms(t);
        require(ms == ms, "now_ms of a live table is NaN");
        break;
      }
    }
    check_status(s);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hotspan_fuzz::FuzzInput in(data, size);
  const uint8_t close_at = in.byte();  // main-thread drain round to close after; >= 8: never
  std::array<std::vector<Op>, kThreads> programs;
  for (size_t n = 0; !in.empty() && n < 2048; ++n) {
    Op op{in.byte(), in.byte(), in.byte(), {}};
    if (op.code % 11 == 0 || op.code % 11 == 4 || op.code % 11 == 7) op.s = in.str(12);
    programs[op.b % kThreads].push_back(std::move(op));
  }

  hotspan::TracerOptions options;
  options.time_unit = hotspan::TimeUnit::kTicks;  // as the addon makes them
  auto tracer = hotspan::Tracer::create(options);
  Shared sh;
  sh.api = hotspan::c_api_for(tracer);
  require(sh.api->abi_version == HOTSPAN_ABI_VERSION, "abi version");

  std::vector<std::thread> threads;
  for (const auto& program : programs) threads.emplace_back([&sh, &program] { run(sh, program); });
  const bool closes = close_at < 8;
  for (int round = 0; round < 8; ++round) {
    tracer->flush();
    if (closes && round == close_at) tracer->close();
    std::this_thread::yield();
  }
  for (auto& th : threads) th.join();
  tracer->flush();

  // Interned ids name something on every thread.
  for (const auto& slot : sh.names) require(slot.load() < tracer->name_count() || slot.load() == 0, "unknown id stored");
  if (!closes) {
    const hotspan::FrozenSnapshot snap = tracer->freeze();
    uint64_t thread_spans = 0, async_spans = 0;
    for (const auto& tl : snap.timelines) {
      for (uint32_t i = 0; i < tl.records.size(); ++i) {
        const uint16_t flags = tl.records[i].flags;
        if (tl.kind == hotspan::TimelineKind::kTrack) {
          ++async_spans;
        } else if (!(flags & hotspan::kFlagAbandoned)) {
          ++thread_spans;  // ended by end(), not at thread exit
        }
      }
    }
    require(thread_spans == sh.ok_ends.load(), "OK end() calls and committed spans differ");
    require(async_spans == sh.ok_async_ends.load(), "OK async_end() calls and committed async spans differ");
    hotspan_fuzz::write_and_check(*tracer, "c_api_fuzz");
  }
  tracer->close();
  // After close every entry point answers CLOSED (or INVALID for bad ids).
  uint32_t id = 0;
  require(sh.api->intern(sh.api->tracer, "x", 1, &id) == HOTSPAN_CLOSED, "intern after close");
  require(sh.api->begin(sh.api->tracer, 0) == HOTSPAN_CLOSED, "begin after close");
  return 0;
}
