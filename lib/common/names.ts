// The facade's name cache: string -> id, so a string name crosses into the
// backend once. `limit` is one past the largest id seen, so the hot path can
// accept an id with one comparison and leave unknown ids to the slow path.

import { describe } from './errors';

export class NameCache {
  private readonly ids = new Map<string, number>();
  /** One past the largest name id known to be interned. */
  limit = 0;

  constructor(private readonly intern: (name: string) => number) {}

  id(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      if (name.length === 0) throw new RangeError('hotspan: name must not be empty');
      id = this.intern(wellFormed(name));
      this.ids.set(name, id);
      if (id >= this.limit) this.limit = id + 1;
    }
    return id;
  }

  /** Records that `id` proved valid (a backend accepted it). */
  known(id: number): void {
    if (id >= this.limit) this.limit = id + 1;
  }
}

/** Validates a string name argument. */
export function checkName(name: unknown): string {
  if (typeof name !== 'string') throw new TypeError(`hotspan: name must be a string, got ${describe(name)}`);
  return name;
}

type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };

/**
 * The one rule for lone UTF-16 surrogates on every backend: each becomes
 * U+FFFD, as the native backend's UTF-8 conversion does (names, track and
 * thread names, attribute keys and values).
 */
export function wellFormed(s: string): string {
  const w = s as unknown as WellFormed;
  return w.isWellFormed() ? s : w.toWellFormed();
}

/** A non-empty name string (tracks, names). */
export function checkNonEmptyName(name: unknown, what: string): string {
  checkName(name);
  if ((name as string).length === 0) throw new RangeError(`hotspan: ${what} must not be empty`);
  return name as string;
}
