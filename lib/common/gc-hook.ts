// The GC hook (PythonCall.jl's GCHook, in JS): an unreachable object
// registered with a FinalizationRegistry. When a GC collects it, the cleanup
// callback runs the hook (a flush that drains the native pending queue) and
// registers a fresh object, so every GC that collects one drains the queue.
// Rate-limited so a GC storm does not become a flush storm; stop() ends it.

export class GcHook {
  private readonly registry: FinalizationRegistry<number>;
  private readonly token = {};
  private armed = false;
  private last = -Infinity;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Times the hook ran (tests). */
  runs = 0;

  constructor(
    private readonly onGc: () => void,
    private readonly minIntervalMs = 5,
  ) {
    this.registry = new FinalizationRegistry<number>(() => this.collected());
    this.arm();
  }

  get active(): boolean {
    return this.armed;
  }

  private arm(): void {
    this.armed = true;
    // The object is dropped right away: only a GC can collect it.
    this.registry.register({}, 0, this.token);
  }

  private collected(): void {
    if (!this.armed) return;
    this.registry.register({}, 0, this.token);
    const now = performance.now();
    const wait = this.last + this.minIntervalMs - now;
    if (wait <= 0) {
      this.run(now);
    } else if (this.timer === undefined) {
      // Inside the window: run once at its end rather than drop the drain.
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (this.armed) this.run(performance.now());
      }, Math.ceil(wait));
      this.timer.unref();
    }
  }

  private run(now: number): void {
    this.last = now;
    this.runs++;
    try {
      this.onGc();
    } catch {
      // A cleanup callback must never throw (it would surface as an uncaught
      // exception far from its cause); a failed flush is retried next GC.
    }
  }

  stop(): void {
    this.armed = false;
    this.registry.unregister(this.token);
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
