// The js backend's counter series (tracer.counter()): growable typed-array
// columns per series, bounded like the core's (native/core/record/counter_store.h:
// the same cap, later samples counted as dropped).

import type { CounterSeries } from '../binding/native-binding';

/** Samples kept per series (the core's CounterStore::kMaxSamples). */
export const MAX_COUNTER_SAMPLES = 1 << 20;

interface Column {
  name: string;
  times: Float64Array;
  values: Float64Array;
  size: number;
  dropped: number;
}

export class CounterColumns {
  private readonly byName = new Map<string, Column>();

  /** Stores a sample; the caller checked that `value` is finite. */
  add(name: string, time: number, value: number): void {
    let c = this.byName.get(name);
    if (c === undefined) {
      c = { name, times: new Float64Array(16), values: new Float64Array(16), size: 0, dropped: 0 };
      this.byName.set(name, c);
    }
    if (c.size >= MAX_COUNTER_SAMPLES) {
      c.dropped++;
      return;
    }
    if (c.size === c.times.length) {
      const cap = Math.min(2 * c.size, MAX_COUNTER_SAMPLES);
      const times = new Float64Array(cap);
      const values = new Float64Array(cap);
      times.set(c.times);
      values.set(c.values);
      c.times = times;
      c.values = values;
    }
    c.times[c.size] = time;
    c.values[c.size] = value;
    c.size++;
  }

  /** Every series in order of first use; views of the columns unless `copy`. */
  series(copy: boolean): CounterSeries[] {
    const out: CounterSeries[] = [];
    for (const c of this.byName.values()) {
      const times = c.times.subarray(0, c.size);
      const values = c.values.subarray(0, c.size);
      out.push({ name: c.name, times: copy ? times.slice() : times, values: copy ? values.slice() : values, dropped: c.dropped });
    }
    return out;
  }
}
