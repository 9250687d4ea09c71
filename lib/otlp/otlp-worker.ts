// The OTLP exporter's worker thread: reads and encodes spans through the
// addon (the core's OtlpSource) for a native tracer, or through the core's
// encoder compiled to WebAssembly over the records a js tracer hands over
// (./otlp-js-source), then compresses and sends them, retries: one sender
// for both. Nothing here runs on the tracer's thread. Messages in: 'stop' (send what is left
// until the deadline, then finish). Counts out: OtlpCounters.

import * as http from 'node:http';
import * as https from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';

import type { OtlpConfig } from './otlp-config';
import { OtlpCounters } from './otlp-counters';
import type { JsExportInfo } from './otlp-export-slice';
import { JsOtlpSource, type OtlpRead } from './otlp-js-source';
import { MAX_RESPONSE_BYTES, partialSuccess, retryDelayMs } from './otlp-response';
import { loadNativeAddon } from '../binding/native-loader';

const gzip = promisify(gzipCb);
// OTLP bodies are mostly random ids: level 6 (zlib's default) shrinks them
// little more than level 1 (55% against 57% of raw) at about 1.5x the time.
const GZIP_LEVEL = 1;

interface Data {
  /** A native tracer's share token, or a js tracer's ids and clock. */
  token?: string;
  js?: JsExportInfo;
  config: OtlpConfig;
  counters: SharedArrayBuffer;
}

const { token, js, config, counters: shared } = workerData as Data;
const counters = new OtlpCounters(shared);
const scopeVersion = config.resource.find(([k]) => k === 'telemetry.sdk.version')?.[1] ?? '';

/** Where requests come from: the addon's OtlpSource, or a js tracer's hand-overs. */
interface Source {
  next(maxSpans: number, final: boolean): OtlpRead | Promise<OtlpRead>;
  /** Past the stop's deadline: what is left, counted in `spans`, not encoded. */
  discard(): OtlpRead;
}

function openSource(): Source {
  if (js !== undefined) {
    if (parentPort === null) throw new Error('hotspan: the OTLP worker has no parent port');
    return new JsOtlpSource(parentPort, config, scopeVersion, js);
  }
  const loaded = loadNativeAddon();
  if (loaded.addon === undefined) throw loaded.error ?? new Error('hotspan: the addon did not load in the OTLP worker');
  const addon = loaded.addon;
  const native = addon.otlpSource(token ?? '', { resource: config.resource, scopeVersion, encoding: config.encoding });
  return { next: (maxSpans, final) => addon.otlpNext(native, maxSpans, final), discard: () => addon.otlpDiscard(native) };
}
const source = openSource();

// Retryable per the OTLP/HTTP spec.
const RETRYABLE = new Set([429, 502, 503, 504]);

let stopDeadline: number | undefined;  // performance.now() ms, once stopping
// Called once when a stop arrives: every paused retry, every request in flight.
const onStop = new Set<() => void>();

parentPort?.on('message', (m: { stop?: number; until?: number }) => {
  if (typeof m.stop === 'number') {
    // `until`: the deadline on the epoch axis of the tracer's thread (its
    // shutdown() started the clock), on this thread's performance.now() axis.
    stopDeadline = typeof m.until === 'number' ? m.until - performance.timeOrigin : performance.now() + m.stop;
    for (const f of [...onStop]) f();
  }
});

/** Waits ms, or less when a stop arrives. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      onStop.delete(done);
      resolve();
    }
    onStop.add(done);
  });
}

interface Reply {
  status: number;  // 0: no response (network error or timeout)
  retryAfter?: string;
  contentType?: string;
  body: Uint8Array;
  /** A 2xx whose body came too slowly or was longer than MAX_RESPONSE_BYTES. */
  faulty?: string;
}

const transport = config.url.startsWith('https:') ? https : http;
// Two requests in flight: the next batch is read and encoded while one is sent.
const agent = new transport.Agent({ keepAlive: true, maxSockets: 2 });
const NONE = new Uint8Array();

/**
 * One POST, settled within timeoutMs from its start to the end of the
 * response body (cut sooner at a stop's deadline). A non-2xx status settles
 * at its headers (its body is not read); a 2xx body is read up to
 * MAX_RESPONSE_BYTES.
 */
function post(body: Uint8Array, timeoutMs: number): Promise<Reply> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = {
      ...config.headers,
      'content-type': config.encoding === 'json' ? 'application/json' : 'application/x-protobuf',
      'content-length': body.length,
    };
    if (config.gzip) headers['content-encoding'] = 'gzip';
    let settled = false;
    let status = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (r: Reply): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      onStop.delete(cut);
      resolve(r);
      if (r.faulty !== undefined || r.status === 0) req.destroy();
    };
    const expire = (): void => {
      const ok = status >= 200 && status < 300;
      finish(ok ? { status, body: NONE, faulty: `no whole response within ${String(timeoutMs)} ms` } : { status: 0, body: NONE });
    };
    const arm = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(expire, Math.max(0, ms));
    };
    // A stop cuts the request at its deadline.
    const cut = (): void => {
      if (stopDeadline !== undefined) arm(Math.min(timeoutMs - (performance.now() - started), stopDeadline - performance.now()));
    };
    const started = performance.now();
    const req = transport.request(config.url, { method: 'POST', headers, agent }, (res) => {
      status = res.statusCode ?? 0;
      const head = { status, retryAfter: res.headers['retry-after'], contentType: res.headers['content-type'] };
      if (status < 200 || status >= 300) {
        finish({ ...head, body: NONE });
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (bytes > MAX_RESPONSE_BYTES) {
          finish({ ...head, body: NONE, faulty: `a response body over ${String(MAX_RESPONSE_BYTES)} bytes` });
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => finish({ ...head, body: Buffer.concat(chunks) }));
      res.on('error', expire);
    });
    arm(timeoutMs);
    onStop.add(cut);
    cut();
    req.on('error', () => finish(status >= 200 && status < 300 ? { status, body: NONE, faulty: 'the response was cut short' } : { status: 0, body: NONE }));
    req.end(body);
  });
}

/** Counts a 2xx: its spans sent, less those the partial success rejected; a faulty response's spans are sent (its status said so). */
function accepted(reply: Reply, spans: number): void {
  const partial = reply.faulty !== undefined ? { faulty: reply.faulty } : partialSuccess(reply.body, reply.contentType, spans);
  if (partial.faulty !== undefined) {
    counters.add('faultyResponses', 1);
    counters.add('sent', spans);
    return;
  }
  counters.add('rejected', partial.rejected);
  counters.add('sent', spans - partial.rejected);
}

/** Sends one request until it is settled: sent, rejected, or given up (dropped). */
async function deliver(raw: Uint8Array, spans: number): Promise<void> {
  const body = config.gzip ? await gzip(raw, { level: GZIP_LEVEL }) : raw;
  counters.add('inFlight', spans);
  for (let attempt = 0; ; attempt++) {
    let timeout = config.timeoutMs;
    if (stopDeadline !== undefined) timeout = Math.min(timeout, stopDeadline - performance.now());
    if (timeout <= 0) break;
    counters.add('requests', 1);
    const reply = await post(body, timeout);
    if (reply.status >= 200 && reply.status < 300) {
      accepted(reply, spans);
      counters.add('inFlight', -spans);
      return;
    }
    if (reply.status !== 0 && !RETRYABLE.has(reply.status)) break;
    // Exponential backoff with full jitter; Retry-After when the collector
    // gives one, kept between the backoff and maxRetryDelayMs.
    const cap = Math.min(config.maxRetryDelayMs, config.retryInitialDelayMs * 2 ** Math.min(attempt, 30));
    const delay = retryDelayMs(reply.retryAfter, Date.now(), Math.random() * cap, config.maxRetryDelayMs);
    const resumeAt = performance.now() + delay;
    if (stopDeadline !== undefined && resumeAt >= stopDeadline) break;
    counters.add('retries', 1);
    await pause(delay);
    // Woken by a stop whose deadline comes before the retry was due: given up.
    if (stopDeadline !== undefined && resumeAt >= stopDeadline) break;
  }
  counters.add('dropped', spans);
  counters.add('inFlight', -spans);
}

async function run(): Promise<void> {
  // At most two requests at once: the one being sent and the next.
  let sending: Promise<void> | undefined;
  const settle = async (): Promise<void> => {
    await sending;
    sending = undefined;
  };
  for (;;) {
    const final = stopDeadline !== undefined;
    if (final && performance.now() >= (stopDeadline ?? 0)) {
      await settle();
      // Past the deadline: what is left is counted, neither encoded nor sent.
      const rest = source.discard();
      counters.add('dropped', rest.lost + rest.spans);
      counters.add('sampledOut', rest.sampledOut);
      counters.add('keepTimedOut', rest.keepTimedOut);
      if (rest.waiting === 0) return;
      await pause(1);  // records a thread commits still: the next turn counts them
      continue;
    }
    const next = await source.next(config.maxBatchSize, final);
    counters.add('dropped', next.lost);
    counters.add('sampledOut', next.sampledOut);
    counters.add('keepTimedOut', next.keepTimedOut);
    // A full read (spans sent and sampled out), or records the source has
    // not read yet (a read whose records wait for their root sends fewer
    // spans than it read): more may be read now, not a scheduled delay later.
    const full = next.spans + next.sampledOut >= config.maxBatchSize || next.unread > 0;
    if (next.body !== undefined) {
      const started = deliver(next.body, next.spans);
      await settle();
      sending = started;
      // A full batch: more may wait; a stop that came while sending: drain now.
      if (full || stopDeadline !== undefined) continue;
    } else if (final) {
      await settle();
      if (next.waiting === 0) return;
      continue;  // records held for an ancestor later in the drain
    } else if (full) {
      continue;  // a read of unsampled traces only: the next may be full too
    }
    await settle();
    if (stopDeadline === undefined) await pause(config.scheduledDelayMs);
  }
}

run().then(
  () => {
    counters.markFinished();
    parentPort?.postMessage('finished');
  },
  (err: unknown) => {
    counters.markFinished();
    throw err;
  },
);
