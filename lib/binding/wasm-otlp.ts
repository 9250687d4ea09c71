// The core's OTLP encoder through WebAssembly (native/core/export/
// otlp_batcher.h), in an instance of its own: what the OTLP exporter's
// worker runs for a js tracer. The columns it reads are ./wasm-core's.

import type { NativeSnapshot } from './native-binding';
import { CONTEXT_WORDS, encode, newInstance, putContexts, STATUS_TEXT } from './wasm-core';

const encoder = new TextEncoder();

/** One read of the core's OTLP encoder (native/wasm/exports.cc hs_otlp_next). */
export interface WasmOtlpRead {
  /** The request (protobuf or OTLP/JSON), when spans > 0. */
  body: Uint8Array | undefined;
  spans: number;
  /** Records held back for an ancestor not read yet. */
  held: number;
  /** Records of traces the head sampler left out: not encoded. */
  sampledOut: number;
  /** Records released without their root past the tail keep's wait: decided by the head sampler alone. */
  keepTimedOut: number;
}

/**
 * The core's OTLP encoder (native/core/export/otlp_batcher.h: ids, the hold-back of
 * records whose ancestor is not in the batch, the request) over the js
 * backend's batches: what the OTLP exporter's worker runs for a js tracer,
 * the same C++ the native exporter's OtlpSource runs. Its own instance: the
 * encoder's state lives in it.
 */
export class WasmOtlpEncoder {
  private readonly c = newInstance();
  private readonly handle: number;

  /** `unixOffsetNs`: ns since the Unix epoch at the batches' performance.now() origin; `salt`: the tracer's id salt; `sampler`: its head sampler word (native/core/record/sampler.h); `keep`: its tail keep word (tail_keep.h); `keepNames`: the span names that keep their trace whole. */
  constructor(resource: ReadonlyArray<readonly [string, string]>, scopeVersion: string, encoding: 'protobuf' | 'json', unixOffsetNs: bigint, salt: bigint, sampler = 0n, keep = 0n, keepNames: readonly string[] = []) {
    const strings = resource.flatMap(([k, v]) => [encoder.encode(k), encoder.encode(v)]);
    strings.push(encoder.encode(scopeVersion));
    const size = 4 + strings.reduce((n, s) => n + 4 + s.length, 0);
    const at = this.c.hs_alloc(size);
    const view = new DataView(this.c.memory.buffer, at, size);
    view.setUint32(0, resource.length, true);
    let p = 4;
    for (const s of strings) {
      view.setUint32(p, s.length, true);
      new Uint8Array(this.c.memory.buffer, at + p + 4, s.length).set(s);
      p += 4 + s.length;
    }
    this.handle = this.c.hs_otlp_open(at, size, encoding === 'json' ? 1 : 0, unixOffsetNs, BigInt.asIntN(64, salt), BigInt.asIntN(64, sampler), BigInt.asIntN(64, keep));
    if (this.handle === 0) throw new Error('hotspan: the WebAssembly core rejected the OTLP resource');
    for (const name of keepNames) {
      const utf8 = encoder.encode(name);
      const p = this.c.hs_alloc(Math.max(1, utf8.length));
      new Uint8Array(this.c.memory.buffer, p, utf8.length).set(utf8);
      if (this.c.hs_otlp_keep_name(this.handle, p, utf8.length) !== 0) throw new Error('hotspan: the WebAssembly core rejected a keep name');
    }
  }

  /**
   * One request of at most `maxSpans` spans from the records held back and
   * `batch` (records committed since the previous call, in commit order; in
   * `names` only the names new since then). `unread`: records are left for a
   * later call; `final`: send the held-back ones too. `readThroughMs`: the
   * read watermark (ExportTake.readThroughMs; Infinity: every record read).
   */
  next(batch: NativeSnapshot, maxSpans: number, final: boolean, unread: boolean, readThroughMs = Infinity): WasmOtlpRead {
    const c = this.c;
    const [ptr, size] = encode(c, batch, new Set());
    const contexts = batch.contexts ?? [];
    const states = contexts.map(([, ctx]) => encoder.encode(ctx.tracestate));
    const ctxBytes = 8 * CONTEXT_WORDS * contexts.length + 4 * contexts.length + states.reduce((n, s) => n + s.length, 0);
    let at = 0;
    if (contexts.length > 0) {
      at = c.hs_alloc(ctxBytes);
      putContexts(new BigUint64Array(c.memory.buffer, at, CONTEXT_WORDS * contexts.length), batch);
      const lengths = new Uint32Array(c.memory.buffer, at + 8 * CONTEXT_WORDS * contexts.length, contexts.length);
      let p = at + 8 * CONTEXT_WORDS * contexts.length + 4 * contexts.length;
      states.forEach((state, k) => {
        lengths[k] = state.length;
        new Uint8Array(c.memory.buffer, p, state.length).set(state);
        p += state.length;
      });
    }
    const status = c.hs_otlp_next(this.handle, ptr, size, at, ctxBytes, contexts.length, maxSpans, final ? 1 : 0, unread ? 1 : 0, readThroughMs);
    if (status !== 0) throw new Error(`hotspan: the WebAssembly core rejected its input (${STATUS_TEXT[status] ?? String(status)})`);
    const result = new Uint8Array(c.memory.buffer, c.hs_result_data(), c.hs_result_size());
    const head = new DataView(result.buffer, result.byteOffset, 16);
    const spans = head.getUint32(0, true);
    const keepTimedOut = head.getUint32(12, true);
    return { spans, held: head.getUint32(4, true), sampledOut: head.getUint32(8, true), keepTimedOut, body: spans > 0 ? result.slice(16) : undefined };
  }
}
