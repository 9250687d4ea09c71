// W3C ids: the wire span id and trace id derivations, stored contexts on
// sync and async spans, resolve_span_ids over a batch (parents across
// timelines, unresolved chains), open_span_ids on the owning thread, and the
// context side table under the budget.
#include <set>
#include <string>

#include "check.h"
#include "record/span_ids.h"
#include "test_util.h"
#include "record/thread_state.h"
#include "record/trace_id.h"
#include "record/tracer.h"

using namespace hotspan;
using test_util::find_timeline;
using test_util::salted;

namespace {

// A tracer with a known salt, one name and the main thread's state.
struct Fixture {
  explicit Fixture(uint64_t s)
      : salt(s), t(salted(s)), n(t->intern("n")), st(t->attach_js_thread("main")), tid(timeline_id(*st)) {}
  const uint64_t salt;
  const std::shared_ptr<Tracer> t;
  const uint32_t n;
  const std::shared_ptr<ThreadState> st;
  const uint32_t tid;
};

// ids of the record with `local` on timeline `tid`.
const SpanIds* ids_of(const FrozenSnapshot& s, const std::vector<std::vector<SpanIds>>& ids,
                      uint32_t tid, uint32_t local) {
  for (size_t t = 0; t < s.timelines.size(); ++t) {
    if (s.timelines[t].id != tid) continue;
    for (uint32_t i = 0; i < s.timelines[t].records.size(); ++i)
      if (s.timelines[t].records[i].local_id == local) return &ids[t][i];
  }
  return nullptr;
}

StoredContext remote(uint64_t hi, uint64_t lo, uint64_t parent, uint8_t flags, std::string state) {
  StoredContext c;
  c.trace = TraceId{hi, lo};
  c.parent_wire = parent;
  c.flags = flags;
  c.tracestate = std::move(state);
  return c;
}

}  // namespace

static void derivations_are_distinct_and_valid() {
  const uint64_t salt = 0x1234567890abcdefull;
  std::set<uint64_t> wire;
  std::set<std::pair<uint64_t, uint64_t>> traces;
  for (uint32_t tl = 1; tl <= 8; ++tl) {
    for (uint32_t local = 1; local <= 2000; ++local) {
      const uint64_t id = make_span_id(tl, local);
      const uint64_t w = trace_id::wire_span_id(salt, id);
      CHECK(w != 0);
      wire.insert(w);
      const TraceId t = trace_id::derived_trace_id(salt, id);
      CHECK(t.valid());
      traces.insert({t.hi, t.lo});
    }
  }
  CHECK_EQ(wire.size(), size_t{16000});
  CHECK_EQ(traces.size(), size_t{16000});
  // The salt changes every id; the one span id equal to the salt is still valid.
  CHECK(trace_id::wire_span_id(salt, 5) != trace_id::wire_span_id(salt + 1, 5));
  CHECK(trace_id::wire_span_id(salt, salt) != 0);
  CHECK(trace_id::random_salt() != trace_id::random_salt());
}

static void one_trace_per_local_root() {
  const Fixture f(77);
  const auto& [salt, t, n, st, tid] = f;
  CHECK_EQ(t->id_salt(), salt);
  begin(*st, n, 1);  // 1: root
  begin(*st, n, 2);  // 2
  begin(*st, n, 3);  // 3
  const SpanIds open = open_span_ids(*st, salt);
  end(*st, 4);
  end(*st, 5);
  end(*st, 6);
  begin(*st, n, 7);  // 4: a second root
  end(*st, 8);

  const FrozenSnapshot s = t->freeze();
  std::vector<std::vector<SpanIds>> ids;
  resolve_span_ids(s, salt, ids);
  const SpanIds* a = ids_of(s, ids, tid, 1);
  const SpanIds* b = ids_of(s, ids, tid, 2);
  const SpanIds* c = ids_of(s, ids, tid, 3);
  const SpanIds* d = ids_of(s, ids, tid, 4);
  CHECK(a && b && c && d);
  if (!(a && b && c && d)) return;
  const TraceId root = trace_id::derived_trace_id(salt, make_span_id(tid, 1));
  for (const SpanIds* x : {a, b, c}) {
    CHECK(x->resolved);
    CHECK(x->trace == root);
    CHECK_EQ(x->flags, kTraceFlagSampled);
    CHECK(x->context == nullptr);  // a trace of hotspan's own: no stored context, no tracestate
  }
  CHECK(d->trace == trace_id::derived_trace_id(salt, make_span_id(tid, 4)));
  CHECK(d->trace != root);
  CHECK_EQ(a->parent, uint64_t{0});
  CHECK_EQ(b->parent, a->span);
  CHECK_EQ(c->parent, b->span);
  CHECK_EQ(c->span, trace_id::wire_span_id(salt, make_span_id(tid, 3)));
  // The owner thread saw the same ids while the spans were open.
  CHECK(open.resolved);
  CHECK(open.trace == root);
  CHECK_EQ(open.span, c->span);
  CHECK_EQ(open.parent, b->span);
}

static void remote_parent_context() {
  const Fixture f(99);
  const auto& [salt, t, n, st, tid] = f;
  const StoredContext ctx = remote(0x0af7651916cd43ddull, 0x8448eb211c80319cull,
                                   0xb7ad6b7169203331ull, 1, "congo=t61rcWkgMzE");
  CHECK_EQ(begin_in_context(*st, n, 1, "{\"a\":1}", &ctx, 0), Status::kOk);  // 1: remote child
  CHECK_EQ(begin(*st, n, 2), Status::kOk);                                   // 2: its child
  const SpanIds open = open_span_ids(*st, salt);
  end(*st, 3);
  end(*st, 4);

  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, tid);
  CHECK(tl != nullptr && tl->contexts.size() == 1);
  if (tl == nullptr || tl->contexts.size() != 1) return;
  CHECK_EQ(tl->contexts[0].first, 1u);
  CHECK_EQ(tl->contexts[0].second.tracestate, std::string("congo=t61rcWkgMzE"));
  CHECK_EQ(tl->attrs.size(), size_t{1});  // attributes and a context together
  std::vector<std::vector<SpanIds>> ids;
  resolve_span_ids(s, salt, ids);
  const SpanIds* a = ids_of(s, ids, tid, 1);
  const SpanIds* b = ids_of(s, ids, tid, 2);
  CHECK(a && b);
  if (!(a && b)) return;
  CHECK(a->trace == ctx.trace);
  CHECK_EQ(a->parent, ctx.parent_wire);
  CHECK_EQ(a->flags, uint8_t{1});
  CHECK(b->trace == ctx.trace);
  CHECK_EQ(b->parent, a->span);
  // The context the trace came from (its tracestate), for the child too.
  CHECK(a->context == &tl->contexts[0].second);
  CHECK(b->context == &tl->contexts[0].second);
  CHECK(open.trace == ctx.trace);
  CHECK_EQ(open.parent, a->span);
  // An unsampled remote parent's flags are inherited.
  const StoredContext off = remote(1, 2, 3, 0, "");
  begin_in_context(*st, n, 5, {}, &off, 0);
  begin(*st, n, 6);
  CHECK_EQ(open_span_ids(*st, salt).flags, uint8_t{0});
  end(*st, 7);
  end(*st, 8);
  const FrozenSnapshot s2 = t->freeze();
  resolve_span_ids(s2, salt, ids);
  CHECK_EQ(ids_of(s2, ids, tid, 4)->flags, uint8_t{0});
  CHECK(ids_of(s2, ids, tid, 4)->trace == off.trace);
}

static void parents_across_timelines() {
  const Fixture f(5);
  const auto& [salt, t, n, st, tid] = f;
  const uint32_t track = t->track("async", false);
  begin(*st, n, 1);                                                 // 1: root on main
  const uint64_t tok = t->async_begin(track, n, 2, {}, make_span_id(tid, 1));  // async child
  end(*st, 3);
  // A later sync span whose given parent is the async span (an await continuation).
  begin_in_context(*st, n, 4, {}, nullptr, tok);  // 2
  const SpanIds open = open_span_ids(*st, salt);  // trace not known on the thread alone
  end(*st, 5);
  CHECK_EQ(t->async_end(tok, 6), Status::kOk);
  // An async span under an explicit context (no structural parent).
  const StoredContext ctx = remote(11, 12, 0, 1, "");
  const uint64_t tok2 = t->async_begin(track, n, 7, {}, 0, nullptr, &ctx);
  CHECK_EQ(t->async_end(tok2, 8), Status::kOk);
  t->flush();

  const FrozenSnapshot s = t->freeze();
  std::vector<std::vector<SpanIds>> ids;
  resolve_span_ids(s, salt, ids);
  const TraceId root = trace_id::derived_trace_id(salt, make_span_id(tid, 1));
  const SpanIds* r = ids_of(s, ids, tid, 1);
  const SpanIds* a = ids_of(s, ids, track, static_cast<uint32_t>(tok));
  const SpanIds* c = ids_of(s, ids, tid, 2);
  const SpanIds* x = ids_of(s, ids, track, static_cast<uint32_t>(tok2));
  CHECK(r && a && c && x);
  if (!(r && a && c && x)) return;
  CHECK(a->trace == root);
  CHECK_EQ(a->parent, r->span);
  CHECK(c->trace == root);
  CHECK_EQ(c->parent, a->span);
  CHECK(!open.resolved);
  CHECK_EQ(open.parent, a->span);
  CHECK(x->trace == ctx.trace);
  CHECK_EQ(x->parent, uint64_t{0});
  const auto* main_tl = find_timeline(s, tid);
  CHECK(main_tl != nullptr && main_tl->foreign_parents.size() == 1);
}

static void unresolved_until_the_ancestor_commits() {
  const Fixture f(3);
  const auto& [salt, t, n, st, tid] = f;
  begin(*st, n, 1);
  begin(*st, n, 2);
  end(*st, 3);  // the child ends; its root is still open
  {
    const FrozenSnapshot s = t->freeze();
    std::vector<std::vector<SpanIds>> ids;
    resolve_span_ids(s, salt, ids);
    const SpanIds* c = ids_of(s, ids, tid, 2);
    CHECK(c != nullptr && !c->resolved && !c->trace.valid());
    if (c != nullptr) CHECK_EQ(c->parent, trace_id::wire_span_id(salt, make_span_id(tid, 1)));
  }
  end(*st, 4);
  const FrozenSnapshot s = t->freeze();
  std::vector<std::vector<SpanIds>> ids;
  resolve_span_ids(s, salt, ids);
  const SpanIds* c = ids_of(s, ids, tid, 2);
  CHECK(c != nullptr && c->resolved);
  if (c != nullptr) CHECK(c->trace == trace_id::derived_trace_id(salt, make_span_id(tid, 1)));
}

static void contexts_are_freed_with_their_chunk() {
  TracerOptions o;
  o.memory_limit = 0;  // clamped to the smallest budget
  o.on_full = FullPolicy::kOverwrite;
  auto t = Tracer::create(o);
  const uint32_t n = t->intern("n");
  auto st = t->attach_js_thread("main");
  const StoredContext ctx = remote(1, 2, 3, 1, std::string(400, 'x'));
  for (int i = 0; i < 200000; ++i) {
    begin_in_context(*st, n, 2 * i, {}, &ctx, 0);
    end(*st, 2 * i + 1);
  }
  CHECK(t->memory_used() <= t->memory_limit());
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, timeline_id(*st));
  CHECK(tl != nullptr);
  if (tl == nullptr) return;
  CHECK(tl->counts.overwritten > 0);
  CHECK_EQ(tl->contexts.size(), size_t{tl->records.size()});
}

static void async_end_changes() {
  auto t = Tracer::create();
  const uint32_t a = t->intern("a"), b = t->intern("b");
  const uint32_t track = t->track("otel", false);
  const uint64_t tok = t->async_begin(track, a, 100);
  AsyncEndChanges bad;
  bad.name = 999;
  CHECK_EQ(t->async_end(tok, 200, 0, bad), Status::kInvalid);  // unknown name: still open
  AsyncEndChanges c;
  c.has_start = true;
  c.start_ns = 50;
  c.name = b;
  c.has_attrs = true;
  c.attrs_json = "{\"k\":1}";
  c.has_end = true;
  c.end_ns = 250;  // given: the call's `now` (200) is not the end
  CHECK_EQ(t->async_end(tok, 200, kFlagError, c), Status::kOk);
  t->flush();
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, track);
  CHECK(tl != nullptr && tl->records.size() == 1);
  if (tl == nullptr || tl->records.size() != 1) return;
  const SpanRecord r = tl->records[0];
  CHECK_EQ(r.name, b);
  CHECK_EQ(r.start_ns, 50);
  CHECK_EQ(r.end_ns, 250);
  CHECK((r.flags & kFlagError) != 0);
  CHECK(tl->attrs.size() == 1 && tl->attrs[0].second == "{\"k\":1}");
}

int main() {
  RUN_TEST(derivations_are_distinct_and_valid);
  RUN_TEST(one_trace_per_local_root);
  RUN_TEST(remote_parent_context);
  RUN_TEST(parents_across_timelines);
  RUN_TEST(unresolved_until_the_ancestor_commits);
  RUN_TEST(contexts_are_freed_with_their_chunk);
  RUN_TEST(async_end_changes);
  return check::result("span_ids_test");
}
