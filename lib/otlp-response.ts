// What an OTLP/HTTP response says: ExportTraceServiceResponse.partial_success
// (rejected_spans, error_message), from protobuf or JSON, and Retry-After.

/** Rejected spans and the collector's message; zero and '' for a full success or an unreadable body. */
export interface PartialSuccess {
  rejected: number;
  message: string;
}

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
    } else {
      throw new RangeError(`wire type ${String(wire)}`);
    }
  }
}

export function partialSuccess(body: Uint8Array, contentType: string | undefined): PartialSuccess {
  const out: PartialSuccess = { rejected: 0, message: '' };
  if (body.length === 0) return out;
  try {
    if ((contentType ?? '').includes('json')) {
      const parsed = JSON.parse(Buffer.from(body).toString('utf8')) as { partialSuccess?: { rejectedSpans?: string | number; errorMessage?: string } };
      out.rejected = Number(parsed.partialSuccess?.rejectedSpans ?? 0) || 0;
      out.message = String(parsed.partialSuccess?.errorMessage ?? '');
      return out;
    }
    for (const f of fields(body)) {
      if (f.field !== 1 || f.wire !== 2) continue;  // ExportTraceServiceResponse.partial_success
      for (const g of fields(f.bytes)) {
        if (g.field === 1 && g.wire === 0) out.rejected = g.value;
        if (g.field === 2 && g.wire === 2) out.message = Buffer.from(g.bytes).toString('utf8');
      }
    }
  } catch {
    // An unreadable body on a 2xx: counted as accepted (the spec's full success).
  }
  return out;
}

/** Retry-After (seconds or an HTTP date) in ms, or undefined. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const s = Number(value);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}
