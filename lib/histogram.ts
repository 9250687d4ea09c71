// The js backend's log-linear histogram: the same buckets, rank rule and
// representative as native/core/log_linear_histogram.h, so both backends
// report the same quantiles for the same durations.
//
// Values are non-negative integer ns. v < 128: one exact bucket per value.
// 2^e <= v < 2^(e+1): 128 linear sub-buckets of width 2^(e-7). A bucket
// reports its midpoint lo + (w - 1) / 2 clamped into [min, max], so a
// quantile is off by at most v / 256 (< 1%).

const SUB_BITS = 7;
const SUB = 1 << SUB_BITS;

function octave(v: number): number {
  // floor(log2 v), corrected for rounding of Math.log2 near powers of two.
  let e = Math.floor(Math.log2(v));
  while (2 ** (e + 1) <= v) e++;
  while (2 ** e > v) e--;
  return e;
}

/** 1-based nearest rank ceil(q * n) clamped to [1, n], tolerant of q * n rounding noise. */
export function nearestRank(q: number, n: number): number {
  if (n === 0) return 0;
  if (!(q > 0)) return 1;
  if (q >= 1) return n;
  const r = q * n;
  const rank = Math.ceil(r - r * 1e-12);
  if (rank < 1) return 1;
  return rank >= n ? n : rank;
}

export class LogLinearHistogram {
  #count = 0;
  #min = 0;
  #max = 0;
  #total = 0;
  /** Page 0: exact values 0..127; page p >= 1: octave p + 6. */
  readonly #pages: Array<Float64Array | undefined> = [];
  readonly #pageCounts: number[] = [];

  record(value: number): void {
    const v = value > 0 ? Math.round(value) : 0;
    if (this.#count === 0) {
      this.#min = v;
      this.#max = v;
    } else {
      if (v < this.#min) this.#min = v;
      if (v > this.#max) this.#max = v;
    }
    this.#count++;
    this.#total += v;
    let page: number;
    let sub: number;
    if (v < SUB) {
      page = 0;
      sub = v;
    } else {
      const e = octave(v);
      page = e - (SUB_BITS - 1);
      sub = Math.floor(v / 2 ** (e - SUB_BITS)) - SUB;
    }
    let p = this.#pages[page];
    if (p === undefined) {
      p = new Float64Array(SUB);
      this.#pages[page] = p;
    }
    p[sub]++;
    this.#pageCounts[page] = (this.#pageCounts[page] ?? 0) + 1;
  }

  get count(): number {
    return this.#count;
  }
  get min(): number {
    return this.#count ? this.#min : 0;
  }
  get max(): number {
    return this.#count ? this.#max : 0;
  }
  get total(): number {
    return this.#total;
  }
  get mean(): number {
    return this.#count ? this.#total / this.#count : 0;
  }

  static bucketLow(page: number, sub: number): number {
    if (page === 0) return sub;
    return (SUB + sub) * 2 ** (page - 1);
  }
  static bucketWidth(page: number): number {
    return page === 0 ? 1 : 2 ** (page - 1);
  }

  quantile(q: number): number {
    const n = this.#count;
    if (n === 0) return 0;
    const rank = nearestRank(q, n);
    if (rank === 1) return this.#min;
    if (rank === n) return this.#max;
    let seen = 0;
    for (let page = 0; page < this.#pages.length; page++) {
      const pc = this.#pageCounts[page] ?? 0;
      if (seen + pc < rank) {
        seen += pc;
        continue;
      }
      const counts = this.#pages[page];
      if (counts === undefined) continue;
      for (let sub = 0; sub < SUB; sub++) {
        seen += counts[sub];
        if (seen >= rank) {
          const rep =
            LogLinearHistogram.bucketLow(page, sub) + (LogLinearHistogram.bucketWidth(page) - 1) / 2;
          return Math.min(Math.max(rep, this.#min), this.#max);
        }
      }
    }
    return this.#max;
  }
}
