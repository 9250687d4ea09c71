// The OTLP exporter's cost per span for spans as @opentelemetry/instrumentation-http
// leaves them on the hotspan/otel provider (its attributes, then the reserved
// hotspan.kind and hotspan.scope members lib/otel/otel-data.ts appends), for
// callgrind: OtlpSource::next over batches of 1024 such spans.
// Build against the core and run:
//   g++ -O2 -std=c++17 -Inative/core -Inative/include bench/core/otlp_http_spans.cc \
//     native/build/libhotspan_core.a -lpthread -o /tmp/otlp_http_spans
//   valgrind --tool=callgrind --collect-atstart=no \
//     --toggle-collect='timed_batch*' /tmp/otlp_http_spans BATCHES [json|plain]
// then instructions per span = the total Ir / (BATCHES * 1024). Every batch
// is checked to carry 1024 spans. `plain`: spans without attributes (what
// bench/cases/otlp.mjs exports), protobuf.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "export/otlp_source.h"
#include "record/thread_state.h"
#include "record/tracer.h"

using namespace hotspan;

namespace {

constexpr size_t kBatch = 1024;

// A server span of instrumentation-http 0.208 (semconv 1.x attributes), as otelAttrs renders it.
std::string http_attrs(uint32_t i) {
  const std::string port = std::to_string(40000 + i % 20000);
  return R"({"http.url":"http://127.0.0.1:38911/","http.host":"127.0.0.1:38911","net.host.name":"127.0.0.1",)"
         R"("http.method":"GET","http.scheme":"http","http.target":"/","http.user_agent":"autocannon/8.0.0",)"
         R"("http.flavor":"1.1","net.transport":"ip_tcp","net.host.ip":"127.0.0.1","net.host.port":38911,)"
         R"("net.peer.ip":"127.0.0.1","net.peer.port":)" +
         port +
         R"(,"http.status_code":200,"http.status_text":"OK","hotspan.kind":"server",)"
         R"("hotspan.scope":{"name":"@opentelemetry/instrumentation-http","version":"0.208.0"}})";
}

__attribute__((noinline)) OtlpSource::Batch timed_batch(OtlpSource& src, std::string& body) {
  return src.next(kBatch, false, body);
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 20;
  const bool json = argc > 2 && std::strcmp(argv[2], "json") == 0;
  const bool plain = argc > 2 && std::strcmp(argv[2], "plain") == 0;
  auto t = Tracer::create();
  auto st = t->attach_js_thread("main");
  const uint32_t name = t->intern("GET");
  OtlpResource res;
  res.attributes = {{"service.name", "bench"}};
  auto src = OtlpSource::open(t, res, json ? OtlpEncoding::kJson : OtlpEncoding::kProtobuf, 0);
  std::string body;
  size_t bytes = 0;
  int64_t now = 1000;
  for (int b = 0; b < batches; ++b) {
    for (uint32_t i = 0; i < kBatch; ++i) {
      if (plain) {
        begin(*st, name, now++);
      } else {
        begin_with_attrs(*st, name, now++, http_attrs(i));
      }
      end(*st, now++);
    }
    t->flush();
    const OtlpSource::Batch got = timed_batch(*src, body);
    if (got.spans != kBatch) {
      std::fprintf(stderr, "batch %d: %zu spans, not %zu\n", b, got.spans, kBatch);
      return 1;
    }
    bytes += body.size();
  }
  std::printf("{\"batches\":%d,\"spans\":%zu,\"bytes_per_span\":%.1f}\n", batches, batches * kBatch,
              static_cast<double>(bytes) / (batches * kBatch));
  return 0;
}
