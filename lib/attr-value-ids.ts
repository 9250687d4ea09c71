// Interned attribute string values, facade side: a string value seen
// before crosses to the addon as its id (a number), which the addon turns
// back into the UTF-8 it stored once (native/addon/slot_calls.h), instead
// of reading the JS string again per span. Values repeat in real spans
// (methods, routes, table names); a program whose values never repeat fills
// the table once and its values then cross as strings, as before.

/** Longest string (UTF-16 units) interned; longer ones cross as strings. */
const MAX_LENGTH = 64;
/** DefineValue's answer when the addon holds its limit (SlotShapes::kMaxValues). */
const FULL = -1;

export class AttrValueIds {
  private readonly ids = new Map<string, number>();
  private full = false;

  /** @param define the addon's defineValue: string -> id, or -1 */
  constructor(private readonly define: (value: string) => number) {}

  /**
   * Replaces the string values among values[0, n) by their ids; returns the
   * bits of the values replaced (bit i: values[i]).
   */
  encode(values: unknown[], n: number): number {
    let bits = 0;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (typeof v !== 'string') continue;
      const id = this.ids.get(v) ?? this.add(v);
      if (id < 0) continue;
      values[i] = id;
      bits |= 1 << i;
    }
    return bits;
  }

  private add(v: string): number {
    if (this.full || v.length > MAX_LENGTH) return -1;
    const id = this.define(v);
    if (id === FULL) {
      this.full = true;
      return -1;
    }
    this.ids.set(v, id);
    return id;
  }
}
