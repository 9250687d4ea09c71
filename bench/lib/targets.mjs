// The targets of issues 5, 12, 13, 18 and 35, evaluated on the medians of one run's results.
// Reported (pass / miss / n/a), never asserted.
import { fmt, summarize } from './stats.mjs';

const byName = (results, name) => (results.ratios ?? []).find((r) => r.name === name);

/**
 * The OTel HTTP figures over the no-op provider's floor (the instrumentation
 * and context propagation every provider pays), from the medians of the
 * paired differences (a round's own ratio explodes when its SDK barely
 * exceeds the floor): per load, hotspan's and the SDK's µs over the floor,
 * their ratio, and floor / SDK added (the lowest hotspan / SDK can read).
 * Undefined without the noop, sdk and hotspan modes.
 */
export function otelHttpFloor(otelHttp) {
  const m = otelHttp?.modes;
  if (!m?.noop || !m.sdk?.overNoopCpuUs || !m.hotspan?.overNoopCpuUs) return undefined;
  const at = (suffix) => {
    const hotspanUs = m.hotspan[`overNoopCpuUs${suffix}`].median;
    const sdkUs = m.sdk[`overNoopCpuUs${suffix}`].median;
    return { hotspanUs, sdkUs, ratio: sdkUs > 0 ? hotspanUs / sdkUs : NaN, floorOverSdk: m.noop[`addedCpuUs${suffix}`].median / m.sdk[`addedCpuUs${suffix}`].median };
  };
  return { saturated: at(''), fixed: at('Fixed') };
}

/** One load's floor ratio as text: "0.36x (16.2 / 45.0 µs)", or why there is none. */
export function floorRatioText(f) {
  if (!(f.sdkUs > 0)) return `n/a (the SDK's ${fmt(f.sdkUs)} µs over the floor is within the noise)`;
  return `${fmt(f.ratio)}x (${fmt(f.hotspanUs)} / ${fmt(f.sdkUs)} µs)`;
}

/**
 * The memory-budget case (cases/rss.mjs with a budget) over its runs:
 * results.rssBudget is { runs: [...] }, or in older results (one run) that
 * run's fields themselves. Undefined when it did not run.
 */
export function budgetSummary(rb) {
  if (!rb || rb.error || rb.skipped) return undefined;
  const runs = rb.runs ?? [rb];
  if (runs.length === 0) return undefined;
  const first = runs[0];
  return {
    runs,
    spans: first.spans,
    onFull: first.onFull,
    memoryLimitMiB: first.memoryLimit / 2 ** 20,
    boundMiB: first.boundMiB,
    growthMiB: summarize(runs.map((x) => x.rssGrowthMiB)),
    nsPerSpan: summarize(runs.map((x) => x.nsPerSpan)),
    // How many runs met the bound, and how many had exact counts.
    withinBound: runs.filter((x) => x.withinBound).length,
    countsExact: runs.filter((x) => x.countsExact).length,
    counts: { produced: first.produced, kept: first.kept, overwritten: first.overwritten, dropped: first.dropped },
  };
}

export function evaluateTargets(results) {
  const out = [];
  // kind 'max': value must be <= limit; 'min': value must be >= limit.
  // range: the per-round [min, max] of the figure, when it has rounds; a
  // range that crosses the limit marks the verdict as noisy.
  const add = (id, text, value, kind, limit, unit, note, range) => {
    let status = 'n/a';
    if (Number.isFinite(value)) status = (kind === 'max' ? value <= limit : value >= limit) ? 'pass' : 'MISS';
    const noisy = Array.isArray(range) && Number.isFinite(range[0]) && Number.isFinite(range[1]) && range[0] <= limit && range[1] >= limit;
    // How far off: for a max target value/limit, for a min target limit/value (> 1 = missed by that factor).
    const off = Number.isFinite(value) ? (kind === 'max' ? value / limit : limit / value) : NaN;
    out.push({
      id,
      text,
      kind,
      limit,
      value,
      unit,
      status,
      noisy,
      range: range ?? null,
      off,
      valueText: Number.isFinite(value) ? `${fmt(value)}${unit} (target ${kind === 'max' ? '<=' : '>='} ${limit}${unit})` : 'not measured',
      note: note ?? null,
    });
  };
  // Prefer the in-process pair (immune to load shifting between processes);
  // fall back to the cross-process pairing when the pair did not run.
  const pick = (name) => {
    const ip = byName(results, `in-process: ${name}`);
    return ip && Number.isFinite(ip.median) ? ip : byName(results, name);
  };
  const r = (name) => pick(name)?.median;
  const rr = (name) => {
    const q = pick(name);
    return q ? [q.min, q.max] : undefined;
  };

  add('js-floor', `JS begin(id)/end() vs the two-call floor (${results.clockSource === 'tsc' ? 'rdtsc' : 'clock_gettime'}, hotspan's clock)`, r('hotspan begin(id)/end() / floor'), 'max', 1.25, 'x', null, rr('hotspan begin(id)/end() / floor'));
  add('trace-floor', 'trace() vs the two-call floor', r('hotspan trace(id, fn) / floor'), 'max', 1.5, 'x', null, rr('hotspan trace(id, fn) / floor'));
  add('naive', 'faster than the naive pure-JS span', r('naive / hotspan begin(id)'), 'min', 2, 'x', null, rr('naive / hotspan begin(id)'));
  const otelFloor = r('OTel SDK / floor');
  add('otel', 'faster than the OpenTelemetry SDK', r('OTel SDK / hotspan begin(id)'), 'min', 30, 'x', Number.isFinite(otelFloor) ? `the two-call floor itself is ${fmt(otelFloor)}x faster than the OTel SDK in the same rounds` : null, rr('OTel SDK / hotspan begin(id)'));
  add('native-bare', 'native-thread span vs the bare C++ loop (1 thread)', r('native thread (C ABI) / bare loop, 1 thread'), 'max', 1.3, 'x', null, rr('native thread (C ABI) / bare loop, 1 thread'));
  add('scaling', 'C ABI spans/s, 2 threads vs 1', r('C ABI spans/s, 2 threads / 1 thread'), 'min', 1.8, 'x', results.machine && results.machine.cpus <= 2 ? `${results.machine.cpus} cores: the 2-thread run competes with the OS and any other load; the bare loop scaled ${fmt(r('bare loop spans/s, 2 threads / 1 thread'))}x in the same rounds, hotspan/bare scaling ${fmt(r('C ABI 2-thread scaling / bare loop 2-thread scaling'))}x` : null, rr('C ABI spans/s, 2 threads / 1 thread'));
  add('noop', 'noop backend above the empty loop', r('noop - empty loop'), 'max', 2, ' ns', null, rr('noop - empty loop'));
  add('js-naive', 'js backend vs the naive pure-JS span', r('js backend / naive'), 'max', 1, 'x', null, rr('js backend / naive'));

  // Issue 12: the overwrite policy in steady state (a 4 MiB budget full, every chunk a recycled one).
  add('overwrite-js', 'overwrite budget full: JS begin(id)/end() vs the two-call floor', r('hotspan begin(id)/end(), overwrite budget full / floor'), 'max', 1.15, 'x', null, rr('hotspan begin(id)/end(), overwrite budget full / floor'));
  add('overwrite-native', 'overwrite budget full: native-thread span vs the bare C++ loop (1 thread)', r('native thread (C ABI), overwrite budget full / bare loop, 1 thread'), 'max', 1.3, 'x', null, rr('native thread (C ABI), overwrite budget full / bare loop, 1 thread'));

  // Issue 18: spans as real code writes them.
  const rq = results.request?.modes;
  const hUs = rq?.hotspan?.addedUsPerRequest;
  add('request-us', `realistic request (${results.request?.spansPerRequest ?? 17} spans): hotspan's added CPU per request`, hUs?.median, 'max', 3, ' µs', rq?.otel ? `OTel SDK ${fmt(rq.otel.addedUsPerRequest.median)} µs, naive JS span ${fmt(rq.naive?.addedUsPerRequest.median)} µs, hotspan without attributes ${fmt(rq['hotspan-noattrs']?.addedUsPerRequest.median)} µs` : null, hUs ? [hUs.min, hUs.max] : undefined);
  add('request-otel', 'realistic request: hotspan / OTel SDK added CPU', r('realistic request: added CPU, hotspan / OTel SDK'), 'max', 0.1, 'x', null, rr('realistic request: added CPU, hotspan / OTel SDK'));
  add('attrs', 'a span with two attributes / the same span without', r('begin(id, 2 attributes) / begin(id)'), 'max', 1.5, 'x', null, rr('begin(id, 2 attributes) / begin(id)'));
  // traceAsync of a sync fn ends at once (no promise to wait on), so the
  // target reads a real async span: an async fn traced, net of the fn's own
  // cost. Results from before the net figure existed read the sync-work pair.
  const asyncNet = 'traceAsync(id, async fn) net of the fn / begin(id)';
  // The sync-work pair's name before the net figure: 'traceAsync(id, fn) / begin(id)'.
  const asyncSync = Number.isFinite(r('traceAsync(id, () => 0), sync work / begin(id)')) ? 'traceAsync(id, () => 0), sync work / begin(id)' : 'traceAsync(id, fn) / begin(id)';
  const hasNet = Number.isFinite(r(asyncNet));
  const asyncName = hasNet ? asyncNet : asyncSync;
  const promiseFloor = r('untraced promise floor (Promise.resolve(fn()).then(f, r)) net of the fn / begin(id)');
  const asyncNote = [
    hasNet ? `sync work, traceAsync(id, () => 0) / begin(id): ${fmt(r(asyncSync))}x` : 'an older result: traceAsync(id, () => 0) / begin(id), not net of an async fn',
    Number.isFinite(promiseFloor) ? `the untraced promise floor alone (net of the fn) is ${fmt(promiseFloor)}x a plain span` : null,
  ].filter(Boolean).join('; ');
  add('async', `traceAsync / a plain span${hasNet ? ' (an async fn, net of the fn)' : ''}`, r(asyncName), 'max', 3, 'x', asyncNote, rr(asyncName));
  add('start', 'a start() handle / a plain span', r('start(name).end() / begin(id)'), 'max', 2, 'x', null, rr('start(name).end() / begin(id)'));

  // Issue 12: the memory budget over 100M spans, and streaming to disk.
  const bs = budgetSummary(results.rssBudget);
  const bText = bs ? `${bs.spans} spans from JS, ${fmt(bs.memoryLimitMiB)} MiB budget, onFull '${bs.onFull}'` : '100M spans from JS, 64 MiB overwrite budget';
  add('budget-rss', `${bText}: RSS growth (MiB) at most the budget + 16 MiB`, bs?.growthMiB.median, 'max', bs?.boundMiB ?? 80, ' MiB', bs ? `${bs.withinBound} of ${bs.runs.length} runs within the bound` : null, bs ? [bs.growthMiB.min, bs.growthMiB.max] : undefined);
  add('budget-counts', `${bText}: runs whose counts are not exact (produced = spans made = kept + overwritten + dropped)`, bs ? bs.runs.length - bs.countsExact : NaN, 'max', 0, '', bs ? `first run: produced ${bs.counts.produced}, kept ${bs.counts.kept}, overwritten ${bs.counts.overwritten}, dropped ${bs.counts.dropped}` : null);
  const st = results.stream && !results.stream.error && !results.stream.skipped ? results.stream : undefined;
  add('stream-writer', "stream writer thread's throughput into a Perfetto file, tracer.stream()", st ? st.spansPerSec.median / 1e6 : NaN, 'min', 20, 'M spans/s', st ? `${st.spans} spans, ${fmt(st.bytesPerSpan.median)} bytes/span` : null, st ? [st.spansPerSec.min / 1e6, st.spansPerSec.max / 1e6] : undefined);
  // The side-by-side figure: adjacent on/off stretches in one process, the median of their ratios.
  add('stream-js', 'JS begin(id)/end() with streaming on / off (in-process, per adjacent stretch pair)', st?.pairRatio?.median, 'max', 1.1, 'x', st ? `ratio of the medians ${fmt(st.ratio.median)}x; the JS thread's own CPU time ${fmt(st.cpuRatio.median)}x; the stream missed ${st.missed.join(', ')}` : null, st?.pairRatio ? [st.pairRatio.min, st.pairRatio.max] : undefined);
  // Issue 35: native spans through hotspan.hpp (cases/hpp.mjs: HOTSPAN_SCOPE
  // and the bare loops side by side in one process, 1 and 2 threads).
  const hp = results.hpp?.rows ? results.hpp : undefined;
  add('hpp-bare', 'HOTSPAN_SCOPE span vs the bare C++ loop (1 thread, in-process)', hp?.hppOverBare.median, 'max', 1.3, 'x', hp ? `${fmt(hp.rows.hpp.median)} ns vs ${fmt(hp.rows.bare.median)} ns; the C ABI through the table ${fmt(hp.rows.cabi.median)} ns` : null, hp ? [hp.hppOverBare.min, hp.hppOverBare.max] : undefined);
  add('hpp-scaling', "HOTSPAN_SCOPE 2-thread scaling / the bare loop's (in-process)", hp?.scalingHppOverBare.median, 'min', 0.9, 'x', hp ? `scaling (1-thread ns / 2-thread ns): bare ${fmt(hp.scalingBare.median)}, HOTSPAN_SCOPE ${fmt(hp.scalingHpp.median)}; hpp-2t per 1M spans: ${fmt(hp.per1MSpans['hpp-2t']?.waits.median)} waits, ${fmt(hp.per1MSpans['hpp-2t']?.faults.median)} faults` : null, hp ? [hp.scalingHppOverBare.min, hp.scalingHppOverBare.max] : undefined);

  // Issue 13: native OTLP export.
  const ot = results.otlp && !results.otlp.error && !results.otlp.skipped ? results.otlp : undefined;
  add('otlp-throughput', 'OTLP export throughput: spans encoded (protobuf) and sent to a loopback receiver, tracer.exportOtlp()', ot ? ot.spansPerSec.median / 1e6 : NaN, 'min', 2, 'M spans/s', ot ? `${ot.spans} spans, ${ot.batch} per request; ${fmt(ot.spansPerCpuSec.median / 1e6)}M spans per CPU-second of the exporting process` : null, ot ? [ot.spansPerSec.min / 1e6, ot.spansPerSec.max / 1e6] : undefined);
  add('otlp-js', 'JS begin(id)/end() with OTLP export on / off (in-process, alternating stretches)', ot?.ratio.median, 'max', 1.1, 'x', ot ? `${fmt(ot.onNsPerSpan.median)} ns on, ${fmt(ot.offNsPerSpan.median)} ns off` : null, ot ? [ot.ratio.min, ot.ratio.max] : undefined);

  const w = results.writers?.writers ?? {};
  const cj = w['chrome-json'];
  const parts = [];
  if (cj?.error) parts.push(`error: ${cj.error}`);
  const cs = w['chrome-json-buffer'];
  if (cs && !cs.error) parts.push(`addon buffer only ${fmt(cs.spansPerSec.median / 1e6)}M/s`);
  const core = results.coreWriter?.chromeJsonSpansPerSec;
  if (core && Number.isFinite(core.median)) parts.push(`core writer alone ${fmt(core.median / 1e6)}M/s`);
  add('chrome-json', 'Chrome JSON writer throughput, tracer.write(file.json)', cj && !cj.error ? cj.spansPerSec.median / 1e6 : NaN, 'min', 5, 'M spans/s', parts.length ? parts.join('; ') : null);
  const pf = w.perfetto;
  const corePf = results.coreWriter?.perfettoSpansPerSec;
  const coreSnap = results.coreWriter?.snapshotSpansPerSec;
  const pfNote = pf?.error
    ? `not available: ${pf.error}`
    : corePf && Number.isFinite(corePf.median)
      ? `core alone, ${results.coreWriter.perfettoInput ?? 'snapshot'} + streamed writer, no file: ${fmt(corePf.median / 1e6)}M/s; freeze + conversion alone ${fmt(coreSnap.median / 1e6)}M/s`
      : null;
  add('perfetto', 'Perfetto protobuf writer throughput', pf && !pf.error ? pf.spansPerSec.median / 1e6 : NaN, 'min', 20, 'M spans/s', pfNote);
  add('rss', 'resident memory per committed span', results.rss && !results.rss.error ? results.rss.bytesPerSpan : NaN, 'max', 32, ' B');
  add('http', 'HTTP throughput loss, hotspan vs OTel SDK', r('HTTP throughput loss, hotspan / OTel'), 'max', 0.1, 'x', (() => {
    const h = results.http?.modes;
    if (!h?.hotspan || !h?.otel) return null;
    const cpu = r('HTTP CPU-per-request loss, hotspan / OTel');
    // What the two-call floor alone would cost this server: 20 spans at the
    // floor's ns per span on top of the untraced CPU per request.
    const floorNs = results.micro?.[results.sameFloor ?? 'floor']?.median;
    const cpuNone = h.none?.cpuUsPerReq?.median;
    const floorLoss = Number.isFinite(floorNs) && Number.isFinite(cpuNone) ? (20 * floorNs) / (cpuNone * 1000 + 20 * floorNs) : NaN;
    const fixed = r('HTTP added CPU per request at a fixed rate, hotspan / OTel');
    const fixedText = Number.isFinite(fixed) && h.hotspan.extraCpuUsFixed ? `; at a fixed rate tracing adds ${fmt(h.hotspan.extraCpuUsFixed.median)} µs (hotspan) vs ${fmt(h.otel.extraCpuUsFixed.median)} µs (OTel) of CPU per request, ratio ${fmt(fixed)}x` : '';
    const floorText = Number.isFinite(floorLoss) ? `; 20 spans at the floor's cost alone would be a ${(floorLoss * 100).toFixed(1)}% loss` : '';
    return `req/s loss hotspan ${(h.hotspan.rpsLoss.median * 100).toFixed(1)}%, OTel ${(h.otel.rpsLoss.median * 100).toFixed(1)}%; by server CPU per request: hotspan ${(h.hotspan.cpuLoss.median * 100).toFixed(1)}%, OTel ${(h.otel.cpuLoss.median * 100).toFixed(1)}%, ratio ${fmt(cpu)}x${fixedText}${floorText}`;
  })(), rr('HTTP throughput loss, hotspan / OTel'));
  // Issue 13: @opentelemetry/instrumentation-http on hotspan's provider vs the SDK.
  const oh = results.otelHttp?.modes;
  const ohRatio = 'OTel HTTP instrumentation: added server CPU per request at a fixed rate, hotspan / SDK';
  const lostText = (m) => (oh?.[m] ? `${m}: ${oh[m].lost} of ${oh[m].produced} spans lost` : null);
  const floor = otelHttpFloor(results.otelHttp);
  const floorText = floor ? `; over the no-op floor, (hotspan - no-op) / (SDK - no-op) = ${floorRatioText(floor.saturated)} saturated, ${floorRatioText(floor.fixed)} at the fixed rate; the floor alone is ${fmt(floor.saturated.floorOverSdk)}x (saturated) and ${fmt(floor.fixed.floorOverSdk)}x (fixed rate) of the SDK's added CPU: the least hotspan / SDK any provider under this instrumentation can read` : '';
  add('otel-http', "OTel HTTP instrumentation: hotspan's added server CPU per request / the SDK's (fixed rate)", r(ohRatio), 'max', 0.2, 'x', oh?.hotspan && oh?.sdk ? `added µs per request at ${results.otelHttp.config.fixedRate} req/s: hotspan ${fmt(oh.hotspan.addedCpuUsFixed.median)}, SDK ${fmt(oh.sdk.addedCpuUsFixed.median)}, the instrumentation on the no-op provider ${fmt(oh.noop?.addedCpuUsFixed?.median)}; saturated: hotspan ${fmt(oh.hotspan.addedCpuUs.median)}, SDK ${fmt(oh.sdk.addedCpuUs.median)}, no-op ${fmt(oh.noop?.addedCpuUs?.median)}${floorText}; ${lostText('sdk')}` : null, rr(ohRatio));
  add('otel-http-lost', 'OTel HTTP instrumentation: spans hotspan lost (produced - received)', oh?.hotspan ? oh.hotspan.lost : NaN, 'max', 0, '', lostText('sdk'));
  // "Zero spans lost where the SDK drops": only a test when the SDK dropped.
  const slow = results.otelHttp?.slow;
  const sh = slow?.modes?.hotspan;
  const ss = slow?.modes?.sdk;
  const pct = (x) => `${((100 * x.lost) / Math.max(1, x.produced)).toFixed(1)}%`;
  add('otel-http-slow-lost', `OTel HTTP instrumentation, a collector answering ${slow?.config?.receiverDelayMs ?? '?'} ms late: spans hotspan lost where the SDK drops`, sh && ss && ss.lost > 0 ? sh.lost : NaN, 'max', 0, '', sh && ss ? `SDK lost ${ss.lost} of ${ss.produced} (${pct(ss)}); hotspan lost ${sh.lost} of ${sh.produced} (its exporter counted ${sh.countedDropped} dropped)${ss.lost > 0 ? '' : '; the SDK lost none, so this was not put to the test'}` : null);
  return out;
}
