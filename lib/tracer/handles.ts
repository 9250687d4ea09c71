// start() handles. A handle's span is an ordinary span on the thread's
// open-span stack; the handle remembers the span's local id and the stack
// depth it opened at, so handle.end() ends its own span and never another
// one that a plain end()/begin() pair left at the same depth. Handles still
// open when the current job ends (a microtask), or when 1024 handles wait,
// are registered with a FinalizationRegistry: one collected while still
// open is ended by the cleanup (flagged abandoned) as soon as it is the
// innermost open span, so no stack keeps an open span forever. Handles
// ended within the job they were opened in (most) never touch the registry,
// whose register and unregister cost several spans each; none is ever
// unregistered (the cleanup skips ended ones). The hot begin()/end() path
// allocates no handle and knows nothing of this.

import type { Backend } from '../backends/backend';
import { describe } from '../common/errors';
import { FLAG_ABANDONED, FLAG_ERROR } from '../common/flags';
import { checkCallOptions } from './options';

interface Held {
  readonly name: string;
  /** openDepth() right after the span began. */
  readonly depth: number;
  /** Local id of the span (innermost() right after it began). */
  readonly local: number;
  open: boolean;
}

/** Options of a handle's `end()`. */
export interface EndOptions {
  /** Flag the span as failed. */
  error?: boolean;
}

/** An open span returned by `tracer.start(name)`; `end()` ends it. Collected while open, it is ended and flagged `abandoned`. */
export class SpanHandle {
  /** @hidden Made by the package, not by users. */
  constructor(
    private readonly tracker: HandleTracker,
    private readonly held: Held,
  ) {}

  /** The span's name. */
  get name(): string {
    return this.held.name;
  }

  /** Whether the span is still open. */
  get open(): boolean {
    return this.held.open;
  }

  /** Ends the span. Throws when it already ended or is not the innermost open span. */
  end(options?: EndOptions): void {
    const o = checkCallOptions(options, 'end()', ['error']);
    const error = o?.error ?? false;
    if (typeof error !== 'boolean') throw new TypeError(`hotspan: end() option error must be a boolean, got ${describe(error)}`);
    this.tracker.end(this.held, error ? FLAG_ERROR : 0);
  }
}

/** Young handles that trigger an adopt() before the job ends (bounds what is strongly held). */
const YOUNG_MAX = 1024;

export class HandleTracker {
  private readonly registry = new FinalizationRegistry<Held>((held) => this.collected(held));
  private zombies: Held[] = [];
  private stopped = false;
  /** Handles opened since the last adopt(), strongly held until then. */
  private young: SpanHandle[] = [];
  private youngHeld: Held[] = [];
  private readonly adoptYoung = (): void => this.adopt();

  /** @param backend the tracer's current backend (it changes when the tracer closes) */
  constructor(private readonly backend: () => Backend) {}

  /** @param begin opens the span on the backend's stack */
  open(name: string, begin: () => void): SpanHandle {
    begin();
    const b = this.backend();
    const last = b.lastBegun();
    const held: Held = { name, depth: b.openDepth(), local: last >= 0 ? last : b.innermost(), open: true };
    const handle = new SpanHandle(this, held);
    this.youngHeld.push(held);
    if (this.young.push(handle) === 1) queueMicrotask(this.adoptYoung);
    else if (this.young.length >= YOUNG_MAX) this.adopt();
    return handle;
  }

  /** Registers the young handles still open; the GC may then collect them. */
  private adopt(): void {
    const young = this.young;
    const held = this.youngHeld;
    this.young = [];
    this.youngHeld = [];
    if (this.stopped) return;
    for (let i = 0; i < young.length; i++) {
      if (held[i].open) this.registry.register(young[i], held[i]);
    }
  }

  end(held: Held, flags: number): void {
    if (!held.open) throw new Error(`hotspan: span "${held.name}" was already ended`);
    const b = this.backend();
    const d = b.openDepth();
    // Its depth, and no span begun since its own: it is the innermost (the checks below need not ask).
    const innermost = d === held.depth && b.lastBegun() === held.local;
    if (!innermost && d <= held.depth && b.innermost() !== held.local) {
      // Its depth is gone or holds another span: a plain end() closed it.
      held.open = false;
      throw new Error(`hotspan: span "${held.name}" was already ended by end(); nothing was changed`);
    }
    if (d > held.depth) {
      throw new Error(
        `hotspan: span "${held.name}" is not the innermost open span (${String(d - held.depth)} ` +
          'opened after it still open); end those first, nothing was changed',
      );
    }
    if (flags === 0) b.end();
    else b.endFlags(flags);
    held.open = false;
    this.reap();
  }

  private collected(held: Held): void {
    if (!held.open || this.stopped) return;
    this.zombies.push(held);
    this.reap();
  }

  /** Ends abandoned spans that are innermost now. Never throws. */
  reap(): void {
    if (this.zombies.length === 0 || this.stopped) return;
    try {
      const b = this.backend();
      for (;;) {
        const d = b.openDepth();
        const top = b.innermost();
        // Spans deeper than the stack, or whose depth now holds another
        // span, were already ended by plain end() calls.
        this.zombies = this.zombies.filter((z) => z.depth < d || (z.depth === d && z.local === top));
        const i = this.zombies.findIndex((z) => z.depth === d);
        if (i < 0) return;
        b.endFlags(FLAG_ABANDONED);
        this.zombies[i].open = false;
        this.zombies.splice(i, 1);
      }
    } catch {
      // Closed under us: the spans stay unrecorded, as open spans do at close().
      this.zombies = [];
    }
  }

  /** Number of collected handles whose spans wait to be ended (tests). */
  get waiting(): number {
    return this.zombies.length;
  }

  stop(): void {
    this.stopped = true;
    this.zombies = [];
    this.young = [];
    this.youngHeld = [];
  }
}
