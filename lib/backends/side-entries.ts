// Per-record side data of the js backend (attribute texts, stored trace
// contexts): [record number, value] in record order, the oldest dropped
// with its record when the budget overwrites it.

export class SideEntries<T> {
  /** Entries from `head` on are live; those before it were dropped. */
  items: Array<[number, T]> = [];
  head = 0;

  push(record: number, value: T): void {
    this.items.push([record, value]);
  }

  /** Drops the entry of record `record` when it is the oldest live one; returns its value. */
  dropOldest(record: number): T | undefined {
    const a = this.items;
    if (this.head >= a.length || a[this.head][0] !== record) return undefined;
    const value = a[this.head][1];
    this.head++;
    // Compacted once half the array is dropped entries: amortized O(1).
    if (this.head >= 1024 && 2 * this.head >= a.length) {
      this.items = a.slice(this.head);
      this.head = 0;
    }
    return value;
  }

  /** The live entries of records from .. end - 1, with record numbers made relative to `from`. */
  between(from: number, end: number): Array<[number, T]> {
    const a = this.items;
    // Record numbers ascend: the first entry at or after `from`.
    let lo = this.head;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid][0] < from) lo = mid + 1;
      else hi = mid;
    }
    const out: Array<[number, T]> = [];
    for (let k = lo; k < a.length && a[k][0] < end; k++) out.push([a[k][0] - from, a[k][1]]);
    return out;
  }

  /** The live entries with record numbers made relative to `first`. */
  from(first: number): Array<[number, T]> {
    const out: Array<[number, T]> = [];
    for (let k = this.head; k < this.items.length; k++) out.push([this.items[k][0] - first, this.items[k][1]]);
    return out;
  }

  /** Hands the entries over (a joined thread's batch) and starts empty. */
  take(): Array<[number, T]> {
    const a = this.items;
    this.items = [];
    this.head = 0;
    return a;
  }
}
