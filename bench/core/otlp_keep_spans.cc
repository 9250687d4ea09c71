// The OTLP export's cost per span under sampling: trees of a root and 3
// children recorded on one thread, then read by OtlpSource::next in batches
// of 512 at ratio 0.01, head sampling alone (`head`) or with the tail keep
// on (`keep`: errors, 60 s wait; none here, so both send the same share).
// Build against the core (native/build: cmake, then the hotspan_core target) and count
// instructions, which a shared machine does not disturb:
//   g++ -O2 -std=c++17 -Inative/core -Inative/include bench/core/otlp_keep_spans.cc \
//     native/build/libhotspan_core.a -lpthread -o /tmp/otlp_keep_spans
//   valgrind --tool=callgrind --collect-atstart=no \
//     --toggle-collect='hotspan::OtlpSource::next*' /tmp/otlp_keep_spans 100000 head
// then instructions per span = the total Ir / (4 * 100000). Without a mode it
// prints wall-clock ns per span for both, three times (noisy on a shared machine).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include "export/otlp_source.h"
#include "record/thread_state.h"
#include "record/tracer.h"
#include "record/sampler.h"
#include "record/tail_keep.h"
using namespace hotspan;
static double run(bool keep, int trees) {
  TracerOptions o;
  o.sampler = (uint64_t{1} << 56) - (uint64_t{1} << 56) / 100;  // ratio 0.01
  if (keep) o.keep = tail_keep::kKeepErrors | (uint64_t{60000} << tail_keep::kWaitShift);
  auto t = Tracer::create(o);
  auto st = t->attach_js_thread("main");
  const uint32_t root = t->intern("request"), child = t->intern("db.query");
  OtlpResource res; res.attributes = {{"service.name", "bench"}};
  auto src = OtlpSource::open(t, res, OtlpEncoding::kProtobuf, 0);
  int64_t now = 1000;
  for (int g = 0; g < trees; ++g) {
    begin(*st, root, now++);
    for (int c = 0; c < 3; ++c) { begin(*st, child, now++); end(*st, now++); }
    end(*st, now++);
  }
  t->flush();
  std::string body;
  auto s = std::chrono::steady_clock::now();
  size_t spans = 0, out = 0;
  for (;;) { auto b = src->next(512, false, body); spans += b.spans; out += b.sampled_out; if (b.spans == 0 && b.sampled_out == 0) break; }
  auto b = src->next(512, true, body); spans += b.spans; out += b.sampled_out;
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - s).count();
  std::fprintf(stderr, "%s sent %zu sampledOut %zu\n", keep ? "keep" : "head", spans, out);
  if (spans + out != static_cast<size_t>(trees) * 4) {
    std::fprintf(stderr, "%zu spans accounted for, not %d\n", spans + out, trees * 4);
    std::exit(1);
  }
  return ns / (trees * 4.0);
}
int main(int argc, char** argv) {
  int trees = argc > 1 ? std::atoi(argv[1]) : 50000;
  if (argc > 2) { run(std::strcmp(argv[2], "keep") == 0, trees); return 0; }
  for (int r = 0; r < 3; ++r) { double h = run(false, trees), k = run(true, trees); std::printf("head %.1f keep %.1f ns/span\n", h, k); }
}
