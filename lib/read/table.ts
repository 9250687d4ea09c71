// The summary table: one line per name with count, total, mean, p50, p90,
// p99 and max (ms), as stats() returns them.

import type { StatsRow } from './stats';

function ms(v: number): string {
  if (v === 0) return '0';
  if (v >= 100) return v.toFixed(1);
  if (v >= 1) return v.toFixed(3);
  return v.toPrecision(3);
}

/** `tracer.stats()` rows as a text table, one line per name. */
export function formatStats(rows: readonly StatsRow[]): string {
  const head = ['name', 'count', 'total ms', 'mean ms', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'];
  const body = rows.map((r) => [r.name, String(r.count), ms(r.total), ms(r.mean), ms(r.p50), ms(r.p90), ms(r.p99), ms(r.max)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}
