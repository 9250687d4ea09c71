// What the exporter makes of a collector's response: Retry-After kept
// between the backoff and maxRetryDelayMs, and every partial-success field
// checked before it is counted (lib/otlp/otlp-response.ts). Pure functions with
// the clock passed in; the end-to-end cases are in otlp-hostile.test.ts.
import * as path from 'node:path';

import * as protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';

import { partialSuccess, retryAfterMs, retryDelayMs } from '../lib/otlp/otlp-response';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const BACKOFF = 40;  // this attempt's own delay
const MAX = 30_000;  // maxRetryDelayMs

describe('Retry-After', () => {
  it.each([
    ['999999', MAX],                                        // 11.6 days asked: capped
    ['9999999', MAX],                                       // past setTimeout's 2^31-1 ms: capped
    ['0', BACKOFF],                                         // no sooner than the backoff
    ['-1', BACKOFF],                                        // not delay-seconds (nor year -1)
    ['1.5', BACKOFF],                                       // not delay-seconds
    ['junk', BACKOFF],
    ['Fri, 31 Dec 9999 23:59:59 GMT', MAX],                 // far future
    ['Wed, 31 Dec 2025 23:59:00 GMT', BACKOFF],             // past
    ['Thu, 01 Jan 2026 00:00:05 GMT', 5000],                // 5 s from now: honoured
    ['3', 3000],
  ])('%s waits %d ms', (value, want) => {
    expect(retryDelayMs(value, NOW, BACKOFF, MAX)).toBe(want);
  });

  it('no header: the backoff', () => {
    expect(retryDelayMs(undefined, NOW, BACKOFF, MAX)).toBe(BACKOFF);
  });

  it('parses only delay-seconds and HTTP dates', () => {
    expect(retryAfterMs('-1', NOW)).toBeUndefined();
    expect(retryAfterMs(' 7 ', NOW)).toBe(7000);
    expect(retryAfterMs('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(0);
    expect(retryAfterMs('Sun Nov  6 08:49:37 2095', NOW)).toBeGreaterThan(0);
  });

  it('every delay is a valid setTimeout delay for the largest maxRetryDelayMs', () => {
    for (const v of ['9999999', '99999999999999999999', 'Fri, 31 Dec 9999 23:59:59 GMT']) {
      expect(retryDelayMs(v, NOW, 1, 2 ** 31 - 1)).toBeLessThanOrEqual(2 ** 31 - 1);
    }
  });
});

const vendor = path.join(__dirname, '..', 'vendor', 'opentelemetry');
function responseType(): protobuf.Type {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(vendor, target);
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  return root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
}
const proto = (rejectedSpans: number | string): Uint8Array => {
  const t = responseType();
  return t.encode(t.fromObject({ partialSuccess: { rejectedSpans, errorMessage: 'm' } })).finish();
};
const json = (v: unknown): Uint8Array => Buffer.from(JSON.stringify(v));
const PB = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

describe('partial success', () => {
  it('a valid count is read from protobuf and JSON (number or int64 string)', () => {
    expect(partialSuccess(proto(7), PB, 100)).toEqual({ rejected: 7, message: 'm' });
    expect(partialSuccess(json({ partialSuccess: { rejectedSpans: 7, errorMessage: 'x' } }), JSON_TYPE, 100)).toEqual({ rejected: 7, message: 'x' });
    expect(partialSuccess(json({ partialSuccess: { rejectedSpans: '100' } }), JSON_TYPE, 100)).toEqual({ rejected: 100, message: '' });
    expect(partialSuccess(json({}), JSON_TYPE, 100)).toEqual({ rejected: 0, message: '' });
    expect(partialSuccess(new Uint8Array(), PB, 100)).toEqual({ rejected: 0, message: '' });
  });

  it.each([
    ['JSON negative', json({ partialSuccess: { rejectedSpans: -29_200_000 } }), JSON_TYPE],
    ['JSON negative string', json({ partialSuccess: { rejectedSpans: '-5' } }), JSON_TYPE],
    ['JSON more than sent', json({ partialSuccess: { rejectedSpans: 101 } }), JSON_TYPE],
    ['JSON not an integer', json({ partialSuccess: { rejectedSpans: 2.5 } }), JSON_TYPE],
    ['JSON a word', json({ partialSuccess: { rejectedSpans: 'many' } }), JSON_TYPE],
    ['JSON message not a string', json({ partialSuccess: { errorMessage: 3 } }), JSON_TYPE],
    ['JSON partialSuccess not an object', json({ partialSuccess: 3 }), JSON_TYPE],
    ['JSON unreadable', Buffer.from('{"partialSucc'), JSON_TYPE],
    ['protobuf negative (a 10-byte varint)', proto(-5), PB],
    ['protobuf more than sent', proto(101), PB],
    ['protobuf truncated', proto(7).subarray(0, 3), PB],
  ])('%s is faulty, never counted', (_what, body, type) => {
    const r = partialSuccess(body, type, 100);
    expect(r.faulty).toEqual(expect.any(String));
    expect('rejected' in r).toBe(false);
  });

  it('a body of another type (a proxy saying OK) is a full success', () => {
    expect(partialSuccess(Buffer.from('OK'), 'text/plain', 100)).toEqual({ rejected: 0, message: '' });
  });
});
