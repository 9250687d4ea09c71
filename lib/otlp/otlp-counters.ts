// The exporter's counters, shared between its worker (which writes them) and
// the tracer's thread (which reads them for tracer.counts() without a round
// trip): one SharedArrayBuffer.

/** Export counts in tracer.counts().otlp. At rest (after shutdown()): sent + dropped + rejected + sampledOut = produced. */
export interface OtlpCounts {
  /** Spans the collector accepted (a 2xx status, less what its partial success rejected). */
  readonly sent: number;
  /** Spans not delivered: overwritten or dropped by the memory budget before they were read, or given up on (non-retryable status, retries past the shutdown deadline, abandoned at the deadline). Not the rejected ones. */
  readonly dropped: number;
  /** Spans the collector received and rejected in a partial-success response. */
  readonly rejected: number;
  /** Spans of traces the tracer's head sampler left out (`sample`, OTEL_TRACES_SAMPLER): read, never sent, not lost. */
  readonly sampledOut: number;
  /** Spans the tail keep (`sample.keep`) read before their root ended and released after maxWaitMs (or at shutdown) without it: decided by the head sampler alone. Also counted in sent or sampledOut. */
  readonly keepTimedOut: number;
  /** Spans read and not yet settled (in the request being sent or retried). */
  readonly inFlight: number;
  /** HTTP requests made, retries included. */
  readonly requests: number;
  /** Requests sent again after a retryable failure (429, 502, 503, 504, a timeout, a network error). */
  readonly retries: number;
  /**
   * 2xx responses that broke the protocol: a body over 64 KiB or not whole
   * within timeoutMs, or a partial success that cannot be read or is out of
   * range (negative, not an integer, more spans than were sent). Their
   * spans count as sent: the status said so, and a retry would send them twice.
   */
  readonly faultyResponses: number;
}

const FIELDS = ['sent', 'dropped', 'rejected', 'sampledOut', 'keepTimedOut', 'inFlight', 'requests', 'retries', 'faultyResponses'] as const;
type Field = (typeof FIELDS)[number];

/** Int32 slot 0: the worker's state (0 running, 1 finished); then one float64 per field. */
export class OtlpCounters {
  readonly buffer: SharedArrayBuffer;
  readonly state: Int32Array;
  private readonly values: Float64Array;

  constructor(buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? new SharedArrayBuffer(8 + 8 * FIELDS.length);
    this.state = new Int32Array(this.buffer, 0, 2);
    this.values = new Float64Array(this.buffer, 8, FIELDS.length);
  }

  add(field: Field, n: number): void {
    this.values[FIELDS.indexOf(field)] += n;
  }

  set(field: Field, n: number): void {
    this.values[FIELDS.indexOf(field)] = n;
  }

  read(): OtlpCounts {
    const out: Record<string, number> = {};
    FIELDS.forEach((f, i) => {
      out[f] = this.values[i] ?? 0;
    });
    return Object.freeze(out as unknown as OtlpCounts);
  }

  finished(): boolean {
    return Atomics.load(this.state, 0) === 1;
  }

  markFinished(): void {
    Atomics.store(this.state, 0, 1);
    Atomics.notify(this.state, 0);
  }
}
