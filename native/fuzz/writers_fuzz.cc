// The Perfetto and Chrome JSON writers over arbitrary record streams: the
// input drives the core's recording API (JS-like threads, nesting, long and
// zero-length spans, error flags, attributes, tracks serial and concurrent,
// async spans ended out of order or twice, groups,
// threads detached with spans open) on caller-chosen times, then both
// outputs are written and must decode, also midway with spans still open.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "record/span_record.h"
#include "record/tracer.h"
#include "write_outputs.h"

namespace {

using hotspan::ThreadState;

struct Program {
  std::shared_ptr<hotspan::Tracer> tracer;
  std::vector<std::shared_ptr<ThreadState>> threads;
  std::vector<uint32_t> names, tracks;
  std::vector<uint64_t> tokens;
  int64_t now = 0;

  template <typename T>
  T pick(const std::vector<T>& v, uint8_t b) const {
    return v.empty() ? T{} : v[b % v.size()];
  }
  size_t thread_index(uint8_t b) const { return b % threads.size(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hotspan_fuzz::FuzzInput in(data, size);
  hotspan::TracerOptions options;
  options.origin_ns = static_cast<int64_t>(in.u32()) << 12;
  Program p;
  p.tracer = hotspan::Tracer::create(options);
  p.now = options.origin_ns + (static_cast<int64_t>(in.byte()) << 20);
  p.threads.push_back(p.tracer->attach_js_thread("main"));
  p.names.push_back(p.tracer->intern("n"));
  hotspan::Tracer& t = *p.tracer;

  for (int ops = 0; !in.empty() && ops < 4096; ++ops) {
    const uint8_t op = in.byte();
    const uint8_t arg = in.byte();
    ThreadState& th = *p.threads[p.thread_index(arg)];
    switch (op % 16) {
      case 0: p.names.push_back(t.intern(in.str(16))); break;
      case 1: hotspan::begin(th, p.pick(p.names, in.byte()), p.now); break;
      case 2: hotspan::begin_with_attrs(th, p.pick(p.names, in.byte()), p.now, in.str(48)); break;
      case 3: hotspan::end(th, p.now, (arg & 0x80) ? hotspan::kFlagError : 0); break;
      case 4: p.now += in.byte(); break;
      case 5: p.now += static_cast<int64_t>(in.u32()) << (arg % 12); break;  // up to ~2^43 ns
      case 6: p.tracks.push_back(t.track(in.str(8), (arg & 1) != 0)); break;
      case 7: {
        const uint64_t parent = (arg & 1) ? hotspan::make_span_id(in.byte() % 8, in.byte()) : 0;
        const uint64_t token = t.async_begin(p.pick(p.tracks, in.byte()), p.pick(p.names, in.byte()),
                                             p.now, (arg & 2) ? in.str(32) : std::string(), parent);
        if (token != 0) p.tokens.push_back(token);
        break;
      }
      case 8: t.async_end(p.pick(p.tokens, in.byte()), p.now, (arg & 1) ? hotspan::kFlagError : 0); break;
      case 9: t.group_begin(p.pick(p.names, in.byte()), p.now, (arg & 1) ? in.str(32) : std::string()); break;
      case 10: t.group_end(p.now); break;
      case 11: t.flush(); break;
      case 12:
        if (p.threads.size() < 4) {
          p.threads.push_back(t.attach_js_thread(in.str(8)));
                }
        break;
      case 13: {  // a thread goes away with its spans open; a fresh one takes its place
        const size_t i = p.thread_index(arg);
        t.detach_thread(*p.threads[i], p.now);
        p.threads[i] = t.attach_js_thread("again");
        break;
      }
      case 14:  // a second drain point (the finalization pause this op once toggled is gone)
        t.flush();
        break;
      case 15:
        if (arg % 8 == 0) hotspan_fuzz::write_and_check(t, "writers_fuzz");
        if (arg % 8 == 1) t.set_thread_name(th, in.str(8));
        break;
    }
  }
  t.flush();
  hotspan_fuzz::write_and_check(t, "writers_fuzz");
  for (auto& th : p.threads) t.detach_thread(*th, p.now);
  t.close();
  hotspan_fuzz::write_and_check(t, "writers_fuzz");
  return 0;
}
