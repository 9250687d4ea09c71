// Nesting of one timeline's spans from their times alone, the same for both
// formats: each span goes on the first lane where it either starts after
// everything open there has ended or (when `nest`) lies inside the innermost
// open span, which is then its parent. A thread's spans nest, so they take one
// lane. A concurrent track's spans are independent operations: one inside
// another's time is not its child, so they are not nested but spread over lanes.

/** Growable typed column. */
export class Column<T extends Float64Array | Int32Array> {
  length = 0;
  constructor(public data: T) {}
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new (this.data.constructor as new (n: number) => T)(Math.max(16, this.data.length * 2));
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}

export interface Layout {
  /** Per span (by the index given): lane, depth within its lane, parent span index or -1. */
  lane: Int32Array;
  depth: Int32Array;
  parent: Int32Array;
  lanes: number;
}

/**
 * Lays out spans `ids` (indices into start/end) of one timeline; the result
 * arrays are indexed by span index and must have room for every id.
 */
export function layOut(ids: Int32Array, start: Float64Array, end: Float64Array, nest: boolean, out: Layout): number {
  const order = Array.from(ids).sort((a, b) => start[a] - start[b] || end[b] - end[a] || a - b);
  const stacks: number[][] = [];
  for (const i of order) {
    const s = start[i];
    const e = end[i];
    let placed = -1;
    for (let l = 0; l < stacks.length; l++) {
      const st = stacks[l];
      while (st.length > 0 && end[st[st.length - 1]] <= s) st.pop();
      const top = st.length > 0 ? st[st.length - 1] : -1;
      if (top < 0 || (nest && start[top] <= s && e <= end[top])) {
        placed = l;
        out.parent[i] = top;
        out.depth[i] = st.length;
        st.push(i);
        break;
      }
    }
    if (placed < 0) {
      placed = stacks.length;
      stacks.push([i]);
      out.parent[i] = -1;
      out.depth[i] = 0;
    }
    out.lane[i] = placed;
  }
  out.lanes = Math.max(out.lanes, stacks.length);
  return stacks.length;
}
