// What an OTLP/HTTP response says: ExportTraceServiceResponse.partial_success
// (rejected_spans, error_message), from protobuf or JSON, and Retry-After.
// A collector is not trusted: every field is checked before it is counted,
// and a value no correct collector sends makes the response faulty.

/** The most of a response body the exporter reads; a longer body is the collector's fault. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Rejected spans and the collector's message (zero and '' for a full
 * success), or `faulty` with what was wrong: a body that cannot be read, or
 * a rejected count that is not an integer from 0 to the spans sent.
 */
export type PartialSuccess = { rejected: number; message: string; faulty?: undefined } | { faulty: string };

function varint(b: Uint8Array, at: { i: number }): number {
  let v = 0;
  let scale = 1;
  for (;;) {
    const byte = b[at.i++];
    if (byte === undefined) throw new RangeError('truncated varint');
    v += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return v;
    scale *= 128;
  }
}

// Fields of one message: (number, wire type, varint value or byte range).
function* fields(b: Uint8Array): Generator<{ field: number; wire: number; value: number; bytes: Uint8Array }> {
  const at = { i: 0 };
  while (at.i < b.length) {
    const key = varint(b, at);
    const wire = key % 8;
    const field = Math.floor(key / 8);
    if (wire === 0) {
      yield { field, wire, value: varint(b, at), bytes: b.subarray(0, 0) };
    } else if (wire === 2) {
      const n = varint(b, at);
      if (at.i + n > b.length) throw new RangeError('truncated field');
      yield { field, wire, value: n, bytes: b.subarray(at.i, at.i + n) };
      at.i += n;
    } else if (wire === 1 || wire === 5) {
      at.i += wire === 1 ? 8 : 4;
      if (at.i > b.length) throw new RangeError('truncated field');
    } else {
      throw new RangeError(`wire type ${String(wire)}`);
    }
  }
}

function checkedRejected(n: number, spans: number): number {
  if (!Number.isSafeInteger(n) || n < 0 || n > spans) {
    throw new RangeError(`rejected_spans ${String(n)} is not an integer from 0 to the ${String(spans)} spans sent`);
  }
  return n;
}

function fromJson(text: string, spans: number): { rejected: number; message: string } {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new TypeError('the body is not a JSON object');
  const ps: unknown = (parsed as { partialSuccess?: unknown }).partialSuccess;
  if (ps === undefined || ps === null) return { rejected: 0, message: '' };
  if (typeof ps !== 'object' || Array.isArray(ps)) throw new TypeError('partialSuccess is not an object');
  const { rejectedSpans, errorMessage } = ps as { rejectedSpans?: unknown; errorMessage?: unknown };
  // OTLP/JSON writes an int64 as a decimal string or a number.
  let rejected = 0;
  if (typeof rejectedSpans === 'string' && /^-?\d+$/.test(rejectedSpans)) rejected = Number(rejectedSpans);
  else if (typeof rejectedSpans === 'number') rejected = rejectedSpans;
  else if (rejectedSpans !== undefined && rejectedSpans !== null) throw new TypeError(`rejectedSpans is ${JSON.stringify(rejectedSpans)}`);
  if (errorMessage !== undefined && errorMessage !== null && typeof errorMessage !== 'string') throw new TypeError('errorMessage is not a string');
  return { rejected: checkedRejected(rejected, spans), message: errorMessage ?? '' };
}

function fromProtobuf(body: Uint8Array, spans: number): { rejected: number; message: string } {
  const out = { rejected: 0, message: '' };
  for (const f of fields(body)) {
    if (f.field !== 1) continue;  // ExportTraceServiceResponse.partial_success
    if (f.wire !== 2) throw new TypeError(`partial_success has wire type ${String(f.wire)}`);
    for (const g of fields(f.bytes)) {
      if (g.field === 1) {
        // int64: a negative count is a 10-byte varint, far above any batch.
        if (g.wire !== 0) throw new TypeError(`rejected_spans has wire type ${String(g.wire)}`);
        out.rejected = checkedRejected(g.value, spans);
      } else if (g.field === 2) {
        if (g.wire !== 2) throw new TypeError(`error_message has wire type ${String(g.wire)}`);
        out.message = Buffer.from(g.bytes).toString('utf8');
      }
    }
  }
  return out;
}

/**
 * The partial success of a 2xx response to a request of `spans` spans. An
 * empty body is a full success, as is a body of a type other than JSON or
 * protobuf (a proxy's text); JSON or protobuf that cannot be read, or holds
 * a value out of range, is faulty.
 */
export function partialSuccess(body: Uint8Array, contentType: string | undefined, spans: number): PartialSuccess {
  if (body.length === 0) return { rejected: 0, message: '' };
  const type = (contentType ?? 'application/x-protobuf').toLowerCase();
  try {
    if (type.includes('json')) return fromJson(Buffer.from(body).toString('utf8'), spans);
    if (type.includes('protobuf')) return fromProtobuf(body, spans);
    return { rejected: 0, message: '' };
  } catch (err) {
    return { faulty: err instanceof Error ? err.message : String(err) };
  }
}

// RFC 9110 section 10.2.3: delay-seconds is digits only; an HTTP-date starts
// with a day name (IMF-fixdate, RFC 850 and asctime forms).
const DELAY_SECONDS = /^\d+$/;
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;

/** Retry-After (delay-seconds or an HTTP-date) in ms from `now` (ms since the epoch), or undefined when it is neither. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  const v = value?.trim() ?? '';
  if (DELAY_SECONDS.test(v)) return Number(v) * 1000;
  if (!HTTP_DATE.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * The pause before a retry: the collector's Retry-After when it gives a
 * valid one, kept between the exporter's own backoff for this attempt
 * (`backoffMs`; a collector cannot make it retry sooner) and `maxMs`
 * (the maxRetryDelayMs option; nor park it longer).
 */
export function retryDelayMs(retryAfter: string | undefined, now: number, backoffMs: number, maxMs: number): number {
  const asked = retryAfterMs(retryAfter, now) ?? backoffMs;
  return Math.min(maxMs, Math.max(backoffMs, asked));
}
