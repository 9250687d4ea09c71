// The flame graph of `hotspan view`: spans aggregated by call path. A span's
// parent is the span its parent_id names when the trace has it (an async
// span's parent on another track, a child begun on another thread), else the
// span it nests in by time on its thread (layout.ts); a concurrent track's
// spans nest only through parent_id. Spans with the same name under the same
// path are one node, whose total is the sum of their durations.

/** Node k: name id name[k], parent node parent[k] (-1: a root), summed duration total[k] (ns). */
export interface FlameGraph {
  name: number[];
  parent: number[];
  total: number[];
}

/**
 * Builds the graph of n spans. parentOf(i) is span i's parent index or -1.
 * A parent chain that loops (ids repeated in a malformed file) is cut where it
 * comes back: the span where it closes becomes a root.
 */
export function flameGraph(n: number, nameOf: ArrayLike<number>, durNs: (i: number) => number, parentOf: (i: number) => number): FlameGraph {
  const g: FlameGraph = { name: [], parent: [], total: [] };
  const child = new Map<string, number>();
  // node[i]: span i's node; -1: not yet placed; -2: on the current chain.
  const node = new Int32Array(n).fill(-1);
  const chain: number[] = [];
  for (let i0 = 0; i0 < n; i0++) {
    if (node[i0] !== -1) continue;
    // Walk up to a placed ancestor (or a root), then place the chain top down.
    let up = -1;
    for (let i = i0; ; ) {
      chain.push(i);
      node[i] = -2;
      const p = parentOf(i);
      if (p < 0 || p >= n || node[p] === -2) break;
      if (node[p] >= 0) {
        up = node[p];
        break;
      }
      i = p;
    }
    while (chain.length > 0) {
      const i = chain.pop() as number;
      const key = `${String(up)}:${String(nameOf[i])}`;
      let id = child.get(key);
      if (id === undefined) {
        id = g.name.length;
        child.set(key, id);
        g.name.push(nameOf[i]);
        g.parent.push(up);
        g.total.push(0);
      }
      node[i] = id;
      g.total[id] += durNs(i);
      up = id;
    }
  }
  return g;
}
