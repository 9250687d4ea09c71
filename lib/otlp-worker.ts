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
import { partialSuccess, retryAfterMs } from './otlp-response';
import { loadNativeAddon } from './native-loader';

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
function openSource(): { next(maxSpans: number, final: boolean): OtlpRead | Promise<OtlpRead> } {
  if (js !== undefined) {
    if (parentPort === null) throw new Error('hotspan: the OTLP worker has no parent port');
    return new JsOtlpSource(parentPort, config, scopeVersion, js);
  }
  const loaded = loadNativeAddon();
  if (loaded.addon === undefined) throw loaded.error ?? new Error('hotspan: the addon did not load in the OTLP worker');
  const addon = loaded.addon;
  const native = addon.otlpSource(token ?? '', { resource: config.resource, scopeVersion, encoding: config.encoding });
  return { next: (maxSpans, final) => addon.otlpNext(native, maxSpans, final) };
}
const source = openSource();

// Retryable per the OTLP/HTTP spec.
const RETRYABLE = new Set([429, 502, 503, 504]);

let stopDeadline: number | undefined;  // performance.now() ms, once stopping
let wake: (() => void) | undefined;

parentPort?.on('message', (m: { stop?: number }) => {
  if (typeof m.stop === 'number') {
    stopDeadline = performance.now() + m.stop;
    wake?.();
  }
});

/** Waits ms, or less when a stop arrives (none once stopping: the deadline rules). */
function pause(ms: number, evenWhenStopping = false): Promise<void> {
  return new Promise((resolve) => {
    if (stopDeadline !== undefined && !evenWhenStopping) {
      resolve();
      return;
    }
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      wake = undefined;
      resolve();
    }
    wake = done;
  });
}

interface Reply {
  status: number;  // 0: no response (network error or timeout)
  retryAfter?: string;
  contentType?: string;
  body: Uint8Array;
}

const transport = config.url.startsWith('https:') ? https : http;
// Two requests in flight: the next batch is read and encoded while one is sent.
const agent = new transport.Agent({ keepAlive: true, maxSockets: 2 });

function post(body: Uint8Array, timeoutMs: number): Promise<Reply> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = {
      ...config.headers,
      'content-type': config.encoding === 'json' ? 'application/json' : 'application/x-protobuf',
      'content-length': body.length,
    };
    if (config.gzip) headers['content-encoding'] = 'gzip';
    let settled = false;
    const finish = (r: Reply): void => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const req = transport.request(config.url, { method: 'POST', headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        finish({
          status: res.statusCode ?? 0,
          retryAfter: res.headers['retry-after'],
          contentType: res.headers['content-type'],
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', () => finish({ status: 0, body: new Uint8Array() }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => finish({ status: 0, body: new Uint8Array() }));
    req.end(body);
  });
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
      const partial = partialSuccess(reply.body, reply.contentType);
      const rejected = Math.min(spans, partial.rejected);
      counters.add('rejected', rejected);
      counters.add('dropped', rejected);
      counters.add('sent', spans - rejected);
      counters.add('inFlight', -spans);
      return;
    }
    if (reply.status !== 0 && !RETRYABLE.has(reply.status)) break;
    // Exponential backoff with full jitter; Retry-After when the collector gives one.
    const cap = Math.min(config.maxRetryDelayMs, config.retryInitialDelayMs * 2 ** Math.min(attempt, 30));
    const delay = retryAfterMs(reply.retryAfter, Date.now()) ?? Math.random() * cap;
    if (stopDeadline !== undefined && performance.now() + delay >= stopDeadline) break;
    counters.add('retries', 1);
    await pause(delay, true);
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
      // Past the deadline: what is left is read and counted, not sent.
      const rest = await source.next(1 << 20, true);
      counters.add('dropped', rest.lost + rest.spans);
      if (rest.spans === 0 && rest.waiting === 0) return;
      continue;
    }
    const next = await source.next(config.maxBatchSize, final);
    counters.add('dropped', next.lost);
    if (next.body !== undefined) {
      const started = deliver(next.body, next.spans);
      await settle();
      sending = started;
      // A full batch: more may wait; a stop that came while sending: drain now.
      if (next.spans >= config.maxBatchSize || stopDeadline !== undefined) continue;
    } else if (final) {
      await settle();
      if (next.waiting === 0) return;
      continue;  // records held for an ancestor later in the drain
    }
    await settle();
    await pause(config.scheduledDelayMs);
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
