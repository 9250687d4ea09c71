// A one-shot broadcast for "something changed": settle() loops await it
// with a deadline instead of polling.

export class ChangeSignal {
  private waiters: Array<() => void> = [];

  /** Wakes everyone waiting now. */
  notify(): void {
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
      if (Number.isFinite(ms)) timer = setTimeout(done, Math.max(1, Math.ceil(ms)));
      this.waiters.push(done);
    });
  }
}
