// Small statistics over per-run figures.
export function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

export function summarize(xs) {
  const v = xs.filter((x) => Number.isFinite(x));
  return {
    runs: xs,
    median: median(v),
    min: v.length ? Math.min(...v) : NaN,
    max: v.length ? Math.max(...v) : NaN,
  };
}

/** Pairs run i of `a` with run i of `b` (same round, so same machine state). */
export function paired(a, b, op) {
  const out = [];
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    out.push(Number.isFinite(x) && Number.isFinite(y) ? op(x, y) : NaN);
  }
  return out;
}

export function fmt(x, digits = 3) {
  if (!Number.isFinite(x)) return 'n/a';
  const a = Math.abs(x);
  if (a >= 1000) return x.toFixed(0);
  if (a >= 100) return x.toFixed(1);
  if (a >= 10) return x.toFixed(2);
  return x.toPrecision(digits);
}
