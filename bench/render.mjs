// Renders the performance tables from the newest results JSON in
// bench/results/ (or --file=PATH): bench/results/README-table.md and
// bench/results/chart.svg; from a full run also docs/performance.md (between
// its bench markers) and the README's comparison table (between its compare
// markers). Every figure comes from the JSON; nothing here is typed by hand.
//
//   node bench/render.mjs [--file=bench/results/<date>-<commit>.json] [--quick] [--partial] [--out=FILE.md]
//
// --out: the markdown to FILE.md and its chart beside it (FILE.svg), nothing
// else: README.md, docs/ and bench/results/ stay as they are (a look at a run).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, median } from './lib/stats.mjs';
import { budgetSummary, floorRatioText, otelHttpFloor } from './lib/targets.mjs';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const resultsDir = path.join(benchDir, 'results');

function newestResults() {
  const argFile = process.argv.find((a) => a.startsWith('--file='));
  if (argFile) return argFile.slice(7);
  if (process.argv.includes('--quick')) return path.join(resultsDir, 'quick-latest.json');
  if (process.argv.includes('--partial')) return path.join(resultsDir, 'partial-latest.json');
  const files = readdirSync(resultsDir).filter((f) => /^\d{4}-\d{2}-\d{2}-.+\.json$/.test(f));
  if (files.length === 0) throw new Error('no results in bench/results/: run `npm run bench` first');
  // Newest by the date recorded inside, not by file name or mtime. Only
  // run.mjs's results (a schema and a date): the by-hand cases' files
  // (cases/http-sampling.mjs, ...) share the folder but not the layout.
  const dated = files
    .map((f) => JSON.parse(readFileSync(path.join(resultsDir, f), 'utf8')))
    .map((r, i) => ({ f: files[i], d: r.schema !== undefined && typeof r.date === 'string' ? r.date : undefined }))
    .filter((x) => x.d !== undefined);
  if (dated.length === 0) throw new Error('no npm run bench results in bench/results/: run `npm run bench` first');
  dated.sort((a, b) => (a.d < b.d ? 1 : -1));
  return path.join(resultsDir, dated[0].f);
}

const ns = (x) => (Number.isFinite(x) ? fmt(x) : 'n/a');
const range = (s) => (s && Number.isFinite(s.min) ? `${fmt(s.min)} – ${fmt(s.max)}` : '');

/** A [what, median, min – max] row of a summary (stats.mjs), scaled; one run has no range. */
function figureRow(label, s, unit = '', scale = 1) {
  return [label, `${fmt(s.median / scale)}${unit}`, s.runs.length > 1 ? `${fmt(s.min / scale)} – ${fmt(s.max / scale)}` : ''];
}

function table(head, rows) {
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map((h, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`];
  for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
  return lines.join('\n');
}

function ratioOf(r, name) {
  return (r.ratios ?? []).find((q) => q.name === name);
}

export function renderMarkdown(r, file, chartName = 'chart.svg') {
  const out = [];
  const m = r.machine;
  out.push(
    `Measured ${r.date.slice(0, 10)} with \`npm run bench\`${r.quick ? ' --quick (smoke run, not for comparison)' : ''} on ${m.model} (${m.cpus} cores, clocksource ${m.clocksource ?? 'n/a'}), Node ${r.node} (Node-API ${r.napi}), commit \`${r.commit}\`${r.dirty ? ' with uncommitted changes' : ''}. ` +
      `${r.config.runs} rounds; every case runs in a fresh process, cases alternate within a round; figures are the median, min and max over the rounds of each process's figure (JS: the median of its mitata samples; C++: thread CPU time per span). ` +
      `Ratios are computed pair by pair within a round, then summarised. ${r.clockSource ? `hotspan's records read ${r.clockSource === 'tsc' ? 'the invariant TSC (rdtsc)' : 'CLOCK_MONOTONIC'}, so "the floor" in ratios and targets is \`${r.sameFloor}\` and the bare C++ thread loops read the same clock. ` : ''}Load average at start ${r.loadavgStart.map((x) => x.toFixed(2)).join(', ')}. Source: \`${path.relative(path.join(benchDir, '..'), file)}\`.`,
  );
  out.push('', `![ns per span](${chartName})`);

  if (r.micro) {
    const floor = r.micro.floor;
    out.push('', '### JS spans (ns per span)', '');
    const rows = Object.entries(r.micro).map(([id, c]) => {
      if (c.skipped) return [c.label, 'skipped', '', '', '', ''];
      const vs = floor && !floor.skipped && id !== 'floor' ? `${fmt(c.median / floor.median)}x` : id === 'floor' ? '1x' : '';
      let label = c.label;
      const last = c.results.filter(Boolean).pop();
      if (last?.info && Number.isFinite(last.info.droppedFraction)) label += ` — dropped ${(last.info.droppedFraction * 100).toFixed(1)}% of spans`;
      const cpu = median(c.results.filter(Boolean).map((x) => x.cpuNsPerSpan));
      return [label, ns(c.median), range(c), vs, ns(c.meanMedian), ns(cpu)];
    });
    out.push(table(['case', 'median', 'min – max', 'vs floor', 'mean-based', 'process CPU'], rows));
    out.push('', 'Each process reports the median of its samples (1000 spans each); "mean-based" is the median over rounds of each process\'s mean, which also carries rare costs (major GC, preemption). "process CPU" is the CPU time of every thread of the process per span over a 300 ms stretch (median over rounds): it includes work moved off the calling thread, such as the page faults that hotspan\'s chunk reserve takes on its own thread.');
  }
  if (r.native) {
    out.push('', '### Native threads', '');
    const rows = Object.values(r.native).map((c) => {
      if (c.skipped) return [c.label, 'skipped', '', ''];
      const spsMed = median(c.results.filter(Boolean).map((x) => x.spansPerSec));
      return [c.label, ns(c.median), range(c), Number.isFinite(spsMed) ? `${fmt(spsMed / 1e6)} M` : ''];
    });
    out.push(table(['case', 'ns per span (median)', 'min – max', 'spans/s (all threads)'], rows));
  }
  const hp = r.hpp;
  if (hp?.rows) {
    out.push('', `### Native spans through hotspan.hpp (one process per run, ${hp.rounds} rounds of ${hp.spans} spans in rotating order; median of ${hp.processes} processes)`, '');
    const rows = Object.values(hp.rows).map((c) => [c.label, ns(c.median), range(c)]);
    out.push(table(['case (thread CPU time)', 'ns per span (median)', 'min – max'], rows));
    out.push('', `HOTSPAN_SCOPE over the bare loop: ${fmt(hp.hppOverBare.median)}x. 2-thread scaling (1-thread ns per span / 2-thread ns per span, 1 when a second thread costs the first nothing): bare loop ${fmt(hp.scalingBare.median)}, HOTSPAN_SCOPE ${fmt(hp.scalingHpp.median)}, which is ${fmt(hp.scalingHppOverBare.median)}x the bare loop's.`);
    const counts = Object.entries(hp.per1MSpans).map(([k, c]) => [k, fmt(c.faults.median), fmt(c.waits.median), fmt(c.preempted.median)]);
    if (counts.length) {
      out.push('', 'Per 1M spans of each timed thread (getrusage RUSAGE_THREAD): counts, which preemption does not stretch as it stretches times; but a wait (a blocking lock) needs the two threads to run at once, which a loaded machine makes rarer:', '');
      out.push(table(['case', 'page faults', 'waits (voluntary switches)', 'preempted'], counts));
    }
  } else if (hp) out.push('', '### Native spans through hotspan.hpp', '', `${hp.skipped ?? hp.error}`);
  if (r.holder) {
    out.push('', '### Holder check (core in C++, no Node; ns per record)', '');
    if (r.holder.skipped) out.push(`skipped: ${r.holder.skipped}`);
    else {
      out.push(table(['path', 'median', 'min – max'], Object.values(r.holder.rows).map((h) => [h.label, ns(h.median), range(h)])));
      for (const x of r.holder.missing) out.push('', `Not measurable separately: ${x}.`);
    }
  }
  if (r.writers || r.rss) {
    out.push('', '### Output and memory', '');
    const rows = [];
    if (r.writers?.writers) {
      for (const [k, w] of Object.entries(r.writers.writers)) {
        if (w.error) rows.push([`${k} writer (${r.writers.spans} spans)`, 'n/a', w.error.replace(/\|/g, '/')]);
        else {
          const js = k.startsWith('js-backend ');
          const how = js ? 'js backend: the core built to WebAssembly, tracer.write() to a file' : k.endsWith('-buffer') ? 'the addon into a Buffer, no file' : 'tracer.write() to a file';
          rows.push([`${js ? k.slice('js-backend '.length) : k} writer (${r.writers.spans} spans, ${how})`, `${fmt(w.spansPerSec.median / 1e6)} M spans/s`, `${fmt(w.bytesPerSpan.median)} bytes/span`]);
        }
      }
    } else if (r.writers?.skipped) rows.push(['writers', 'skipped', r.writers.skipped]);
    if (r.coreWriter) {
      const cw = r.coreWriter;
      rows.push([`Chrome JSON, core writer alone into memory (C++, ${cw.spans} spans)`, `${fmt(cw.chromeJsonSpansPerSec.median / 1e6)} M spans/s`, `${fmt(cw.chromeJsonBytesPerSpan.median)} bytes/span`]);
      // Results before the core bench measured these have no such rows.
      if (cw.perfettoSpansPerSec) rows.push([`Perfetto, core alone: ${cw.perfettoInput ?? 'snapshot'} + streamed writer, no file (C++, ${cw.spans} spans)`, `${fmt(cw.perfettoSpansPerSec.median / 1e6)} M spans/s`, '']);
      if (cw.snapshotSpansPerSec) rows.push([`snapshot alone: freeze + tick conversion of every record (C++, ${cw.spans} spans)`, `${fmt(cw.snapshotSpansPerSec.median / 1e6)} M spans/s`, '']);
    }
    if (r.rss && Number.isFinite(r.rss.bytesPerSpan)) rows.push([`RSS growth per committed span (${r.rss.committed} spans, fresh process)`, `${fmt(r.rss.bytesPerSpan)} bytes`, '']);
    out.push(table(['what', 'figure', ''], rows));
  }
  // Results from before these sections rendered have some of their keys or none: each section is there when its key is.
  const st = r.stream;
  if (st && !st.error && !st.skipped) {
    const c = r.config.stream ?? {};
    const n = st.spansPerSec.runs.length;
    out.push('', `### Streaming to disk (tracer.stream(), native backend, fresh process per run; median of ${n} runs)`, '');
    out.push(table(['what', 'median', 'min – max'], [
      figureRow(`stream writer thread: ${st.spans} recorded spans drained into a Perfetto file (open to close)`, st.spansPerSec, ' M spans/s', 1e6),
      figureRow('file bytes per span', st.bytesPerSpan, ' bytes'),
      figureRow('JS begin(id)/end(), streaming on', st.onNsPerSpan, ' ns'),
      figureRow('JS begin(id)/end(), streaming off', st.offNsPerSpan, ' ns'),
      figureRow('on / off: median of the adjacent stretch pairs\' ratios (the target\'s figure)', st.pairRatio, 'x'),
      figureRow('on / off: ratio of the medians', st.ratio, 'x'),
      figureRow("on / off: the JS thread's own CPU time", st.cpuRatio, 'x'),
      ['spans the stream missed (per run)', st.missed.join(', '), ''],
    ]));
    out.push('', `The JS cost: two native tracers in one process with the same 64 MiB overwrite budget (full after the warm-up), one streaming to a file, recording ${c.stretchSpans ?? '?'}-span stretches of \`begin(id)/end()\` in turn (${c.stretches ?? '?'} stretches, the first of each pair alternating). The JS thread's CPU time (schedstat) leaves out the waits for a CPU the stream's thread or other load had.`);
  }
  const bs = budgetSummary(r.rssBudget);
  if (bs) {
    const n = bs.runs.length;
    const c = bs.counts;
    out.push('', `### Memory budget (${bs.spans} spans from JS, \`memoryLimit\` ${fmt(bs.memoryLimitMiB)} MiB, \`onFull: '${bs.onFull}'\`, native backend, fresh process per run; ${n === 1 ? 'one run' : `median of ${n} runs`})`, '');
    out.push(table(['what', 'median', 'min – max'], [
      figureRow('RSS growth: the highest RSS (sampled every 1M spans) over the RSS before the tracer existed', bs.growthMiB, ' MiB'),
      ['bound: the budget + 16 MiB', `${fmt(bs.boundMiB)} MiB`, `met in ${bs.withinBound} of ${n} run${n === 1 ? '' : 's'}`],
      figureRow('JS begin(id)/end() at the full budget', bs.nsPerSpan, ' ns'),
      [`counts (${n > 1 ? 'first run' : 'the run'}): produced / kept / overwritten / dropped`, `${c.produced} / ${c.kept} / ${c.overwritten} / ${c.dropped}`, ''],
      ['counts exact: produced = spans made = kept + overwritten + dropped', bs.countsExact === n ? 'yes' : 'no', `${bs.countsExact} of ${n} run${n === 1 ? '' : 's'}`],
    ]));
  }
  if (r.bigread && !r.bigread.error && !r.bigread.skipped) {
    const b = r.bigread;
    out.push('', `### Reading a big trace (${b.committed} spans recorded from JS, native backend, fresh process; median of ${b.runs} runs)`, '');
    const row = (label, s) => [label, `${fmt(s.median)} ms`, range(s)];
    const rows = [row('stats()', b.statsMs), row('query().group("step") (a frozen view, then the groups)', { median: b.queryOpenMs.median + b.queryGroupsMs.median, min: b.queryOpenMs.min + b.queryGroupsMs.min, max: b.queryOpenMs.max + b.queryGroupsMs.max })];
    for (const [k, s] of Object.entries(b.query)) rows.push(row(`query: ${k.replace(/\|/g, '/')}`, s));
    rows.push(row(`snapshot({ offset, limit: ${b.boundedSnapshotRecords} })`, b.boundedSnapshotMs));
    rows.push(row('snapshotBatches(): the first batch', b.firstBatchMs));
    rows.push(row(`snapshotColumns() of ${b.columnsRecords} records (typed arrays)`, b.columnsMs));
    rows.push(row(`snapshot() of all: ${b.plainSnapshot?.refused ? 'refused (RangeError naming the bounded forms)' : 'returned'}`, b.plainSnapshotMs));
    rows.push([`V8 heap per materialized SpanRecord`, `${fmt(b.heapBytesPerRecord.median)} bytes`, '']);
    out.push(table(['read', 'median', 'min – max'], rows));
  }
  if (r.request?.modes) {
    const q = r.request;
    out.push('', `### Realistic request (${q.spansPerRequest} spans: an async request span with 2 string attributes, trace() closures, begin/end per line item, 4 spans with a numeric attribute; modes alternating in one process, ${q.config.rounds} rounds of ${q.config.batch} requests, ${r.config.runs} processes)`, '');
    const label = { none: 'no tracing (stubbed handler)', hotspan: 'hotspan', 'hotspan-noattrs': 'hotspan, same spans without attributes', otel: 'OpenTelemetry SDK (BatchSpanProcessor, no-op exporter)', naive: 'naive pure-JS span' };
    const rows = Object.entries(q.modes).map(([k, m]) => [label[k] ?? k, fmt(m.cpuUsPerRequest.median), k === 'none' ? '' : `${fmt(m.addedUsPerRequest.median)} (${fmt(m.addedUsPerRequest.min)} – ${fmt(m.addedUsPerRequest.max)})`, k === 'none' ? '' : fmt(m.addedUsPerSpan.median)]);
    out.push(table(['tracer', 'CPU µs/request', 'added µs/request', 'added µs/span'], rows));
    out.push('', 'CPU is the process CPU time (all threads) over a batch; "added" is paired with the untraced batch of the same round. Both hotspan modes record into one tracer (their own names), as a service has one tracer.');
  }
  if (r.http) {
    out.push('', `### HTTP workload (node:http on 127.0.0.1, 20 spans per request with attributes and an async request span, autocannon ${r.config.http.connections} connections, ${r.config.http.rounds} rounds of ${r.config.http.seconds} s)`, '');
    const rows = Object.entries(r.http.modes).map(([k, h]) => [
      k === 'none' ? 'no tracing' : k === 'otel' ? 'OpenTelemetry SDK (BatchSpanProcessor)' : 'hotspan',
      fmt(h.rps.median),
      fmt(h.p99Ms.median),
      h.rpsLoss ? `${(h.rpsLoss.median * 100).toFixed(1)}%` : '',
      h.p99Increase ? `${(h.p99Increase.median * 100).toFixed(1)}%` : '',
      h.cpuUsPerReq ? fmt(h.cpuUsPerReq.median) : '',
      h.cpuLoss ? `${(h.cpuLoss.median * 100).toFixed(1)}%` : '',
      h.cpuUsPerReqFixed ? fmt(h.cpuUsPerReqFixed.median) : '',
      h.extraCpuUsFixed ? fmt(h.extraCpuUsFixed.median) : '',
    ]);
    out.push(table(['server', 'req/s', 'p99 ms', 'throughput loss', 'p99 increase', 'server CPU µs/request', 'CPU-based loss', `CPU µs/request at ${r.config.http.fixedRate} req/s`, 'added server CPU µs/request'], rows));
    out.push('', `Losses are paired within each round against no tracing. The CPU-based loss (1 − CPU per request without tracing / with) is the throughput a CPU-bound server would lose, and is not inflated by other load on the machine. The last two columns come from a second run at a fixed ${r.config.http.fixedRate} req/s (the same for every mode, so the event loop batches the same way): the server CPU per request and what tracing adds to it.`);
    // The issue's figure: added server CPU per request with realistic spans, hotspan against the SDK.
    const added = r.ratios?.find((q) => q.name === 'HTTP added CPU per request at a fixed rate, hotspan / OTel');
    const h = r.http.modes.hotspan?.extraCpuUsFixed;
    const o = r.http.modes.otel?.extraCpuUsFixed;
    if (added && h && o) {
      out.push('', `Added server CPU per request with these realistic spans (the request span with its \`method\` and \`url\` attributes on a concurrent track, \`trace()\` closures, a \`begin/end\` loop, numeric attributes): hotspan ${fmt(h.median)} µs, the OpenTelemetry SDK ${fmt(o.median)} µs, a ratio of ${fmt(added.median)} (paired per round, ${range(added)}).`);
    }
  }
  const ot = r.otlp;
  if (ot && !ot.error && !ot.skipped) {
    const c = r.config.otlp ?? {};
    out.push('', `### OTLP export (tracer.exportOtlp(), native backend, to a receiver process on 127.0.0.1 that counts bodies and answers 200; fresh process per run, median of ${ot.runs} runs)`, '');
    out.push(table(['what', 'median', 'min – max'], [
      figureRow(`throughput: ${ot.spans} recorded spans read, encoded (protobuf${ot.gzip ? ', gzip' : ', no gzip'}, ${ot.batch} per request) and sent, exportOtlp() to shutdown()`, ot.spansPerSec, ' M spans/s', 1e6),
      figureRow("the same per CPU-second of the exporting process (the exporter's worker; the JS thread only awaits)", ot.spansPerCpuSec, ' M spans/s', 1e6),
      figureRow('JS begin(id)/end(), export on', ot.onNsPerSpan, ' ns'),
      figureRow('JS begin(id)/end(), export off', ot.offNsPerSpan, ' ns'),
      figureRow('on / off: median over the stretches of their ratio (the target\'s figure)', ot.ratio, 'x'),
      ['exporting tracer after shutdown(), per run: sent / dropped / rejected / produced', ot.exported.map((e) => `${e.sent} / ${e.dropped} / ${e.rejected ?? 0} / ${e.produced}`).join('; '), ot.exported.every((e) => e.sent + e.dropped + (e.rejected ?? 0) === e.produced) ? 'sent + dropped + rejected = produced' : '**sent + dropped + rejected ≠ produced**'],
    ]));
    out.push('', `Each process's throughput is the median of its ${c.reps ?? '?'} rep(s), a fresh tracer and exporter each. The JS cost: two native tracers in one process with the same 64 MiB overwrite budget (full after the warm-up), one exporting to the same receiver, their loops of 1000 \`begin(id)/end()\` pairs alternating in ${c.stretches ?? '?'} stretches of 30 ms. The loop records faster than the exporter sends, so the exporter runs flat out and what it could not read before it was overwritten is its \`dropped\`.`);
  }
  const oh = r.otelHttp;
  if (oh?.modes) {
    const c = oh.config;
    out.push('', `### OpenTelemetry instrumentation-http (@opentelemetry/instrumentation-http on node:http at 127.0.0.1, one server span per request, autocannon ${c.connections} connections, ${c.rounds} rounds of ${c.seconds} s saturated + ${c.fixedSeconds} s at ${c.fixedRate} req/s, modes alternating within each round)`, '');
    const label = {
      none: 'no instrumentation',
      noop: "the instrumentation on the API's no-op provider (SDK context manager and propagator)",
      sdk: 'OpenTelemetry SDK: BatchSpanProcessor (defaults), OTLP/HTTP protobuf exporter',
      hotspan: "hotspan/otel's TracerProvider, tracer.exportOtlp()",
    };
    const us = (x) => (x ? `${fmt(x.median)} (${fmt(x.min)} – ${fmt(x.max)})` : '');
    const rows = Object.entries(oh.modes).map(([k, h]) => [
      label[k] ?? k,
      fmt(h.rps.median),
      fmt(h.cpuUsPerReq.median),
      us(h.addedCpuUs),
      fmt(h.cpuUsPerReqFixed.median),
      us(h.addedCpuUsFixed),
      h.produced === undefined ? '' : `${h.produced} / ${h.received} / ${h.lost}`,
    ]);
    out.push(table(['server', 'req/s', 'server CPU µs/request', 'added by tracing', `CPU µs/request at ${c.fixedRate} req/s`, 'added by tracing', 'spans produced / received / lost'], rows));
    out.push('', `Server CPU is the server process's (every thread: an exporter's off-thread encoding and sending count); \"added\" is paired with the uninstrumented server of the same round. Each exporting server sends to its own loopback receiver, which decodes every request with protobufjs on the vendored OTLP schema; lost = produced − received after the exporter's shutdown.${oh.drained ? " Each run's CPU is read once its exporter has sent what the run produced (hotspan: its counts; the SDK: `forceFlush()`), so export work done late is charged to the run that made it." : ''}`);
    const ex = oh.modes.hotspan;
    if (ex?.exporterCpuUsPerReqFixed) {
      out.push('', `Of hotspan's server CPU per request, its exporter's worker thread (reading, encoding and sending) took ${fmt(ex.exporterCpuUsPerReq.median)} µs saturated and ${fmt(ex.exporterCpuUsPerReqFixed.median)} µs at ${c.fixedRate} req/s.`);
    }
    const f = otelHttpFloor(oh);
    if (f) {
      out.push('', `Over the no-op provider (the instrumentation and its context propagation, which every provider pays): saturated, hotspan adds ${fmt(f.saturated.hotspanUs)} µs and the SDK ${fmt(f.saturated.sdkUs)} µs per request, (hotspan − no-op) / (SDK − no-op) = ${floorRatioText(f.saturated)}; at ${c.fixedRate} req/s, ${floorRatioText(f.fixed)} (medians of the differences paired per round). The no-op floor alone is ${fmt(f.saturated.floorOverSdk)}x (saturated) and ${fmt(f.fixed.floorOverSdk)}x (at ${c.fixedRate} req/s) of the SDK's added CPU: no provider under this instrumentation, however cheap, reads a lower hotspan / SDK ratio.`);
    }
    const slow = oh.slow;
    if (slow?.modes) {
      const sc = slow.config;
      out.push('', `#### OpenTelemetry instrumentation-http, a slow collector (the receiver answers each request ${sc.receiverDelayMs} ms late; ${sc.rounds} rounds of ${sc.seconds} s saturated, autocannon ${sc.connections} connections)`, '');
      const rows = Object.entries(slow.modes).map(([k, h]) => [
        label[k] ?? k,
        fmt(h.rps.median),
        String(h.produced),
        String(h.received),
        `${h.lost} (${((100 * h.lost) / Math.max(1, h.produced)).toFixed(1)}%)`,
        h.countedDropped === undefined ? 'not counted' : String(h.countedDropped),
      ]);
      out.push(table(['server', 'req/s', 'spans produced', 'received', 'lost', 'counted as dropped by the exporter'], rows));
      out.push('', "The SDK's BatchSpanProcessor with its defaults (a 2048-span queue, one 512-span export at a time) drops what does not fit its queue, silently; hotspan's exporter keeps unsent spans in the tracer's memory budget (two 2048-span requests in flight) and counts any it drops in `counts().otlp.dropped`. Lost = produced − received, counted by the same decoding receiver for both.");
    }
  }
  out.push('', '### Ratios (paired within each round)', '');
  out.push(table(['ratio', 'median', 'min – max'], r.ratios.map((q) => [q.name, `${fmt(q.median)}${q.unit === 'x' ? 'x' : ` ${q.unit}`}`, range(q)])));
  out.push('', '### Targets (reported, not asserted)', '');
  const verdict = (t) => {
    const v = t.status === 'MISS' ? `**miss** (${fmt(t.off)}x off)` : t.status;
    return t.noisy ? `${v}, noisy: rounds ${fmt(t.range[0])} – ${fmt(t.range[1])} cross the target` : v;
  };
  out.push(table(['target', 'measured', 'status'], r.targets.map((t) => [t.text, `${t.valueText}${t.note ? `; ${t.note}` : ''}`, verdict(t)])));
  out.push('', 'Ratios marked "in-process" come from one process alternating both cases in short stretches; the targets use them when present. The others pair round i of two separate processes.');
  return `${out.join('\n')}\n`;
}

// A horizontal bar chart of the JS cases' medians on a log scale, with
// min–max whiskers. Plain SVG, no dependencies.
export function renderSvg(r) {
  const cases = Object.entries(r.micro ?? {}).filter(([, c]) => !c.skipped && Number.isFinite(c.median) && c.median > 0);
  const W = 1000;
  const left = 440;
  const right = 80;
  const barH = 18;
  const gap = 8;
  const top = 46;
  const H = top + cases.length * (barH + gap) + 40;
  const lo = 0.1;
  const hi = Math.max(10, ...cases.map(([, c]) => c.max));
  const decades = [];
  for (let d = Math.floor(Math.log10(lo)); d <= Math.ceil(Math.log10(hi)); d++) decades.push(10 ** d);
  const xmax = decades[decades.length - 1];
  const x = (v) => left + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(xmax) - Math.log10(lo))) * (W - left - right);
  const color = (id) => (id.startsWith('hotspan') ? '#e8590c' : id.startsWith('floor') ? '#1c7ed6' : id === 'js-id' || id === 'noop-id' ? '#f59f00' : '#868e96');
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">ns per span, median of ${r.config.runs} fresh-process rounds (log scale; whiskers: min–max)</text>`,
    `<text x="${W / 2}" y="36" text-anchor="middle" fill="#555">${esc(`${r.machine.model}, ${r.machine.cpus} cores, Node ${r.node}, commit ${r.commit}, ${r.date.slice(0, 10)}`)}</text>`,
  ];
  for (const d of decades) {
    const xx = x(d).toFixed(1);
    parts.push(`<line x1="${xx}" y1="${top - 4}" x2="${xx}" y2="${H - 30}" stroke="#dee2e6"/>`);
    parts.push(`<text x="${xx}" y="${H - 16}" text-anchor="middle" fill="#555">${d >= 1000 ? `${d / 1000} µs` : `${d} ns`}</text>`);
  }
  cases.forEach(([id, c], i) => {
    const y = top + i * (barH + gap);
    const w = Math.max(1, x(c.median) - left);
    parts.push(`<text x="${left - 8}" y="${y + barH - 5}" text-anchor="end">${esc(c.label)}</text>`);
    parts.push(`<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${color(id)}"/>`);
    parts.push(`<line x1="${x(c.min).toFixed(1)}" y1="${y + barH / 2}" x2="${x(c.max).toFixed(1)}" y2="${y + barH / 2}" stroke="black" stroke-width="1"/>`);
    parts.push(`<text x="${(x(Math.max(c.median, c.max)) + 6).toFixed(1)}" y="${y + barH - 5}">${fmt(c.median)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function main() {
  const file = newestResults();
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const outArg = process.argv.find((a) => a.startsWith('--out='));
  if (outArg) {
    const md = outArg.slice(6);
    const svg = md.replace(/\.md$/, '') + '.svg';
    writeFileSync(md, renderMarkdown(r, file, path.basename(svg)));
    writeFileSync(svg, renderSvg(r));
    console.error(`rendered ${md} and ${svg} from ${path.relative(process.cwd(), file)}`);
    return;
  }
  const suffix = r.quick ? '-quick' : r.only ? '-partial' : '';
  const md = path.join(resultsDir, `README-table${suffix}.md`);
  const svg = path.join(resultsDir, `chart${suffix}.svg`);
  writeFileSync(md, renderMarkdown(r, file, path.basename(svg)));
  writeFileSync(svg, renderSvg(r));
  console.error(`rendered ${path.relative(process.cwd(), md)} and ${path.relative(process.cwd(), svg)} from ${path.relative(process.cwd(), file)}`);
  // Only a full run goes into the docs: every table into docs/performance.md
  // (a page whose sections are ## headings), the comparison into the README.
  if (suffix === '') {
    const repo = path.join(benchDir, '..');
    splice(path.join(repo, 'docs', 'performance.md'), 'bench', renderPerformancePage(r, file));
    splice(path.join(repo, 'README.md'), 'compare', renderComparison(r, file));
  }
}

/** The tables as docs/performance.md holds them: its sections are ## headings, the chart beside bench/. */
export function renderPerformancePage(r, file) {
  return renderMarkdown(r, file, '../bench/results/chart.svg').replace(/^(#{3,4}) /gm, (_, h) => `${h.slice(1)} `);
}

/** Replaces what stands between `<!-- name:begin -->` and `<!-- name:end -->` in `file`. */
export function spliceMarkers(text, name, body, what = 'the file') {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error(`${what} has no ${begin} ... ${end} section to render into`);
  return `${text.slice(0, i + begin.length)}\n${body.trim()}\n${text.slice(j)}`;
}

function splice(file, name, body) {
  const rel = path.relative(path.join(benchDir, '..'), file);
  writeFileSync(file, spliceMarkers(readFileSync(file, 'utf8'), name, body, rel));
  console.error(`rendered ${rel} (${name})`);
}

/** The text between `<!-- name:begin -->` and `<!-- name:end -->`, trimmed; null when the markers are missing. */
export function markedSection(text, name) {
  const i = text.indexOf(`<!-- ${name}:begin -->`);
  const j = text.indexOf(`<!-- ${name}:end -->`);
  if (i < 0 || j < i) return null;
  return text.slice(i + `<!-- ${name}:begin -->`.length, j).trim();
}

/** The absolute address of a repository file, as a registry page needs it. */
const REPO_BLOB = 'https://github.com/hotspan/hotspan/blob/main/';

/**
 * The README's comparison: one span, and a realistic request's added CPU, for
 * hotspan, a naive JS span, performance.mark/measure and the OpenTelemetry
 * SDK, from one full run. A row the run lacks is left out.
 */
export function renderComparison(r, file) {
  const micro = r.micro ?? {};
  const modes = r.request?.modes ?? {};
  const hot = micro['hotspan-id'];
  const spanNs = (c) => (c && !c.skipped && Number.isFinite(c.median) ? c.median : NaN);
  const added = (m) => (m && Number.isFinite(m.addedUsPerRequest?.median) ? m.addedUsPerRequest.median : NaN);
  const rows = [
    ['hotspan, `begin(id)`/`end()`', micro['hotspan-id'], modes.hotspan],
    ['naive pure-JS span (an object per span)', micro.naive, modes.naive],
    ['`performance.mark()` + `measure()`', micro['perf-mark'], undefined],
    ['OpenTelemetry SDK (BatchSpanProcessor)', micro.otel, modes.otel],
  ]
    .map(([label, span, req]) => {
      const ns = spanNs(span);
      const us = added(req);
      if (!Number.isFinite(ns) && !Number.isFinite(us)) return null;
      const vs = Number.isFinite(ns) && Number.isFinite(spanNs(hot)) ? `${fmt(ns / spanNs(hot))}x` : '';
      const row = [label, Number.isFinite(ns) ? fmt(ns) : '', vs];
      return r.request ? [...row, Number.isFinite(us) ? fmt(us) : ''] : row;
    })
    .filter(Boolean);
  const m = r.machine;
  const n = r.request?.spansPerRequest;
  const source = path.relative(path.join(benchDir, '..'), file);
  const head = ['', 'one span (ns, median)', 'vs hotspan (ratio of the medians)'];
  return [
    table(r.request ? [...head, `a ${n}-span request: added CPU (µs, median)`] : head, rows),
    '',
    `Measured ${r.date.slice(0, 10)} on ${m.model} (${m.cpus} cores), Node ${r.node}, commit \`${r.commit}\`, ${r.config.runs} rounds; ` +
      `source [\`${source}\`](${REPO_BLOB}${source}).` +
      (r.request ? ` The request is ${n} spans as a service records them: an async request span with two attributes, \`trace()\` closures, a \`begin\`/\`end\` loop and numeric attributes; its CPU is over the same work untraced.` : ''),
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
