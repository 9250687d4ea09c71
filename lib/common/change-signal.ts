// A one-shot broadcast for "something changed": settle() loops await it
// with a deadline instead of polling.

/** The longest delay setTimeout accepts. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export class ChangeSignal {
  private waiters: Array<() => void> = [];

  /** Wakes everyone waiting now. */
  notify(): void {
    if (this.waiters.length === 0) return;  // the common case: no allocation
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves at the next notify(), or after `ms` (never, for Infinity). */
  next(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        resolve();
      };
      // setTimeout takes at most 2^31-1 ms (a longer delay becomes 1 ms, with
      // a warning): a longer wait wakes early and the caller waits again.
      if (Number.isFinite(ms)) timer = setTimeout(done, Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(ms))));
      this.waiters.push(done);
    });
  }
}
