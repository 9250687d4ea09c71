// OTLP exporter options: what tracer.exportOtlp() accepts, each defaulting to
// the standard OTEL_* environment variables (OpenTelemetry's exporter and SDK
// configuration specs), then to the spec's defaults.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';

import { describe } from '../common/errors';

/** Options of `tracer.exportOtlp()`; each defaults to its standard OTEL_* variable. */
export interface OtlpExportOptions {
  /** Full URL of the traces endpoint. Default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + '/v1/traces', else http://localhost:4318/v1/traces. */
  endpoint?: string;
  /** 'http/protobuf' (default) or 'http/json'. Default: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL. */
  protocol?: 'http/protobuf' | 'http/json';
  /** Extra request headers, over OTEL_EXPORTER_OTLP_HEADERS / OTEL_EXPORTER_OTLP_TRACES_HEADERS (`k=v,k2=v2`). */
  headers?: Record<string, string>;
  /** Whole-request timeout in ms, from the request's start to the end of the response body. Default: OTEL_EXPORTER_OTLP_TRACES_TIMEOUT / OTEL_EXPORTER_OTLP_TIMEOUT, else 10000. */
  timeoutMs?: number;
  /** 'gzip' or 'none'. Default: OTEL_EXPORTER_OTLP_TRACES_COMPRESSION / OTEL_EXPORTER_OTLP_COMPRESSION, else 'none'. */
  compression?: 'gzip' | 'none';
  /** service.name. Default: OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES, else 'unknown_service:node'. */
  serviceName?: string;
  /** More resource attributes, over OTEL_RESOURCE_ATTRIBUTES (`k=v,k2=v2`, percent-encoded values). */
  resource?: Record<string, string>;
  /** Spans per request at most. Default: OTEL_BSP_MAX_EXPORT_BATCH_SIZE, else 2048. */
  maxBatchSize?: number;
  /** Ms between reads of new spans when no full batch waits. Default: OTEL_BSP_SCHEDULE_DELAY, else 5000 (the spec's). */
  scheduledDelayMs?: number;
  /** First retry delay in ms (doubled per attempt, full jitter, capped by maxRetryDelayMs). Default 1000. */
  retryInitialDelayMs?: number;
  /** The longest pause before a retry, in ms: caps the backoff and the collector's Retry-After. Default 30000. */
  maxRetryDelayMs?: number;
  /** What shutdown() and process exit wait for the last requests, in ms. Default: OTEL_BSP_EXPORT_TIMEOUT, else 30000. */
  shutdownTimeoutMs?: number;
}

/** The resolved configuration the exporter's worker runs with (structured-clonable). */
export interface OtlpConfig {
  url: string;
  encoding: 'protobuf' | 'json';
  headers: Record<string, string>;
  timeoutMs: number;
  gzip: boolean;
  resource: Array<[string, string]>;
  maxBatchSize: number;
  scheduledDelayMs: number;
  retryInitialDelayMs: number;
  maxRetryDelayMs: number;
  shutdownTimeoutMs: number;
}

const KEYS: ReadonlyArray<keyof OtlpExportOptions> = [
  'endpoint', 'protocol', 'headers', 'timeoutMs', 'compression', 'serviceName', 'resource', 'maxBatchSize',
  'scheduledDelayMs', 'retryInitialDelayMs', 'maxRetryDelayMs', 'shutdownTimeoutMs',
];

type Env = Record<string, string | undefined>;

function envOf(env: Env, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = env[n]?.trim();
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

/** `k=v,k2=v2` (W3C Baggage-like, as OTEL_RESOURCE_ATTRIBUTES and the headers variables are): entries without '=' are ignored. */
export function parseKeyValueList(text: string | undefined): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const item of (text ?? '').split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    const key = item.slice(0, eq).trim();
    let value = item.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // Not percent-encoded as the spec asks: kept as written.
    }
    if (key !== '') out.push([key, value]);
  }
  return out;
}

/** The longest delay setTimeout takes (2^31 - 1 ms, about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A positive number of ms a timer is set to. */
function positiveMs(name: string, v: unknown, fallback: number): number {
  const n = positive(name, v, fallback);
  if (n > MAX_TIMER_MS) throw new RangeError(`hotspan: exportOtlp ${name} must be at most ${String(MAX_TIMER_MS)} ms, got ${describe(v)}`);
  return n;
}

function positive(name: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) {
    throw new RangeError(`hotspan: exportOtlp ${name} must be a positive number, got ${describe(v)}`);
  }
  return n;
}

function oneOf<T extends string>(name: string, v: unknown, allowed: readonly T[], fallback: T): T {
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw new RangeError(`hotspan: exportOtlp ${name} must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${describe(v)}`);
  }
  return v as T;
}

function stringRecord(name: string, v: unknown): Array<[string, string]> {
  if (v === undefined) return [];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new TypeError(`hotspan: exportOtlp ${name} must be an object of strings, got ${describe(v)}`);
  }
  return Object.entries(v).map(([k, val]) => {
    if (typeof val !== 'string') throw new TypeError(`hotspan: exportOtlp ${name}.${k} must be a string, got ${describe(val)}`);
    return [k, val];
  });
}

export function otlpConfig(options: OtlpExportOptions | undefined, env: Env, version: string): OtlpConfig {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new TypeError(`hotspan: exportOtlp options must be an object, got ${describe(options)}`);
  }
  const o = options ?? {};
  for (const k of Object.keys(o)) {
    if (!(KEYS as readonly string[]).includes(k)) throw new TypeError(`hotspan: exportOtlp got an unknown option '${k}'`);
  }
  let url = o.endpoint ?? envOf(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (url === undefined) {
    const base = envOf(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') ?? 'http://localhost:4318';
    url = `${base.replace(/\/+$/, '')}/v1/traces`;
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new RangeError(`hotspan: exportOtlp endpoint must be an http(s) URL, got ${describe(url)}`);
  }
  const protocol = oneOf('protocol', o.protocol ?? envOf(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'),
    ['http/protobuf', 'http/json'] as const, 'http/protobuf');
  const compression = oneOf('compression', o.compression ?? envOf(env, 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', 'OTEL_EXPORTER_OTLP_COMPRESSION'),
    ['gzip', 'none'] as const, 'none');
  const headers: Record<string, string> = {};
  for (const [k, v] of [
    ...parseKeyValueList(envOf(env, 'OTEL_EXPORTER_OTLP_HEADERS')),
    ...parseKeyValueList(envOf(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS')),
    ...stringRecord('headers', o.headers),
  ]) {
    headers[k.toLowerCase()] = v;
  }
  const attrs = new Map<string, string>(parseKeyValueList(envOf(env, 'OTEL_RESOURCE_ATTRIBUTES')));
  for (const [k, v] of stringRecord('resource', o.resource)) attrs.set(k, v);
  if (o.serviceName !== undefined && typeof o.serviceName !== 'string') {
    throw new TypeError(`hotspan: exportOtlp serviceName must be a string, got ${describe(o.serviceName)}`);
  }
  const service = o.serviceName ?? envOf(env, 'OTEL_SERVICE_NAME') ?? attrs.get('service.name') ?? 'unknown_service:node';
  attrs.delete('service.name');
  const resource: Array<[string, string]> = [
    ['service.name', service],
    ['telemetry.sdk.name', 'hotspan'],
    ['telemetry.sdk.language', 'nodejs'],
    ['telemetry.sdk.version', version],
    ...attrs,
  ];
  const maxBatchSize = Math.floor(positive('maxBatchSize', o.maxBatchSize ?? envOf(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'), 2048));
  if (maxBatchSize > 1 << 20) throw new RangeError(`hotspan: exportOtlp maxBatchSize must be at most 1048576, got ${String(maxBatchSize)}`);
  return {
    url,
    encoding: protocol === 'http/json' ? 'json' : 'protobuf',
    headers,
    timeoutMs: positiveMs('timeoutMs', o.timeoutMs ?? envOf(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT'), 10000),
    gzip: compression === 'gzip',
    resource,
    maxBatchSize,
    scheduledDelayMs: positiveMs('scheduledDelayMs', o.scheduledDelayMs ?? envOf(env, 'OTEL_BSP_SCHEDULE_DELAY'), 5000),
    retryInitialDelayMs: positiveMs('retryInitialDelayMs', o.retryInitialDelayMs, 1000),
    maxRetryDelayMs: positiveMs('maxRetryDelayMs', o.maxRetryDelayMs, 30000),
    shutdownTimeoutMs: positiveMs('shutdownTimeoutMs', o.shutdownTimeoutMs ?? envOf(env, 'OTEL_BSP_EXPORT_TIMEOUT'), 30000),
  };
}

/** This package's version (the scope version and telemetry.sdk.version). */
export function packageVersion(): string {
  // lib/ or dist/: package.json is one level up either way.
  return (JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}
