// The js backend's OTLP source, in the exporter's worker (lib/otlp/otlp-worker.ts):
// asks the tracer's thread for the records committed since its last read
// (WasmBackend.takeForExport, read through the core's export cursor)
// when the worker reads, and encodes them with the core's OTLP encoder
// compiled to WebAssembly (WasmOtlpEncoder), as the native exporter reads
// through OtlpSource. What waits while the collector is down stays in the
// tracer's budget: the worker asks for more only when it reads again.

import type { MessagePort } from 'node:worker_threads';

import type { OtlpConfig } from './otlp-config';
import type { NativeSnapshot } from '../binding/native-binding';
import type { ExportSlice, JsExportInfo } from './otlp-export-slice';
import { WasmOtlpEncoder } from '../binding/wasm-otlp';

/** One read of an exporter's source: the request and its span count, records lost before the read, records left. */
export interface OtlpRead {
  body?: Uint8Array;
  spans: number;
  lost: number;
  waiting: number;
  /** Of `waiting`, those the source has not read yet: a read now would bring them. */
  unread: number;
  /** Records of traces the head sampler left out: neither encoded nor sent. */
  sampledOut: number;
  /** Records released without their root past the tail keep's wait: decided by the head sampler alone. */
  keepTimedOut: number;
}

export class JsOtlpSource {
  private readonly encoder: WasmOtlpEncoder;
  private readonly slices: ExportSlice[] = [];
  private arrived: (() => void) | undefined;
  private held = 0;
  /** Records left on the tracer's thread at the latest hand-over. */
  private left = 0;
  /** The read watermark of the latest hand-over (ExportSlice.readThroughMs). */
  private readThroughMs = Infinity;

  constructor(private readonly port: MessagePort, config: OtlpConfig, scopeVersion: string, info: JsExportInfo) {
    this.encoder = new WasmOtlpEncoder(config.resource, scopeVersion, config.encoding, info.unixOffsetNs, info.salt, info.sampler, info.keep, info.keepNames);
    port.on('message', (m: { slice?: ExportSlice; stop?: number }) => {
      if (m.slice !== undefined) this.slices.push(m.slice);
      if (m.slice !== undefined || m.stop !== undefined) this.arrived?.();
    });
  }

  /**
   * As the addon's otlpNext: up to maxSpans spans into one request. Not
   * final: asks the tracer's thread first when nothing is queued (and waits
   * for its answer, or for a stop). Final: only what was handed over (at a
   * stop the tracer's thread hands everything over first).
   */
  async next(maxSpans: number, final: boolean): Promise<OtlpRead> {
    if (this.slices.length === 0 && !final) {
      // Room beside the held records, as OtlpSource reads.
      this.port.postMessage({ pull: maxSpans - Math.min(this.held, Math.floor(maxSpans / 2)) });
      await new Promise<void>((resolve) => {
        this.arrived = resolve;
      });
      this.arrived = undefined;
    }
    const slice = this.slices.shift();
    let lost = 0;
    let snap: NativeSnapshot = EMPTY;
    if (slice !== undefined) {
      lost = slice.lost;
      this.left = slice.left;
      this.readThroughMs = slice.readThroughMs;
      snap = slice.snap;
    }
    // Slices still queued were taken after this one: its `left` counts them.
    const unread = this.left;
    const r = this.encoder.next(snap, maxSpans, final, unread > 0, this.readThroughMs);
    this.held = r.held;
    return { body: r.body, spans: r.spans, lost, waiting: r.held + unread, unread, sampledOut: r.sampledOut, keepTimedOut: r.keepTimedOut };
  }

  /**
   * What a stop past its deadline abandons: the handed-over records counted,
   * not encoded; the held-back ones (at most OtlpBatcher::kMaxHeld) through
   * one final read nobody sends.
   */
  discard(): OtlpRead {
    let spans = 0;
    let lost = 0;
    let sampledOut = 0;
    let keepTimedOut = 0;
    for (const slice of this.slices.splice(0)) {
      spans += slice.snap.count;
      lost += slice.lost;
      this.left = slice.left;
    }
    while (this.held > 0) {
      const r = this.encoder.next(EMPTY, this.held, true, false, Infinity);
      this.held = r.held;
      if (r.spans === 0 && r.sampledOut === 0) break;
      spans += r.spans;
      sampledOut += r.sampledOut;
      keepTimedOut += r.keepTimedOut;
    }
    return { spans, lost, waiting: this.held + this.left, unread: this.left, sampledOut, keepTimedOut };
  }
}

const EMPTY: NativeSnapshot = { names: [], timelines: [], count: 0, times: new Float64Array(0), fields: new Uint32Array(0), attrs: [], contexts: [] };
