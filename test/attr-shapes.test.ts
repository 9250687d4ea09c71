// The facade's shape trie (lib/attrs/attr-shapes.ts) on its own: every object maps
// to the shape of exactly its keys, in order, whichever shapes came before,
// and each shape is defined once. Objects alternate shapes that share the
// root and a first key, so a node's remembered children are hit, missed and
// replaced.
import { describe, expect, it } from 'vitest';

import { AttrShapes } from '../lib/attrs/attr-shapes';
import { AttrValueIds, shapeCode } from '../lib/attrs/attr-value-ids';

function shapesOf(): { shapes: AttrShapes; defined: string[][]; idOf: (keys: string[]) => number } {
  const defined: string[][] = [];
  const shapes = new AttrShapes(
    (keys) => (defined.push(keys), defined.length - 1),
    new AttrValueIds(() => -1, new Float64Array(6)),
  );
  const idOf = (keys: string[]): number => defined.findIndex((k) => k.join('\u0000') === keys.join('\u0000'));
  return { shapes, defined, idOf };
}

describe('attribute shapes', () => {
  it('maps each object to the shape of its keys when shapes alternate at a node', () => {
    const { shapes, defined, idOf } = shapesOf();
    const kinds = [
      { bytes: 1 },
      { method: 1, url: 2 },
      { method: 1 },
      { method: 1, status: 2 },
      { route: 1, bytes: 2 },
      { method: 1, url: 2, n: 3 },
      { url: 1, method: 2 },
    ];
    // Each in turn, then in pairs and threes that evict each other from a node's two remembered children.
    const order = [0, 1, 2, 3, 4, 5, 6, 0, 1, 0, 1, 2, 3, 2, 3, 1, 3, 5, 1, 5, 2, 6, 4, 0, 6, 0, 5, 3, 1];
    for (const i of order) {
      const attrs = kinds[i];
      const code = shapes.of(attrs);
      expect(code).toBe(shapeCode(idOf(Object.keys(attrs))));
    }
    expect(defined).toEqual(kinds.map((k) => Object.keys(k)));
  });

  it('finds no fast form for what the JSON path must see', () => {
    const { shapes, defined } = shapesOf();
    expect(shapes.of({ a: 1, b: 2, c: 3, d: 4, e: 5 })).toBe(-1);
    expect(shapes.of({ a: 1, span_id: 2 })).toBe(-1);
    expect(shapes.of({ a: 1, b: 2 })).toBe(shapeCode(0));
    expect(shapes.of({})).toBe(-1);
    expect(shapes.of(Object.assign(Object.create({ inherited: 1 }) as object, { a: 1 }))).toBe(-1);
    expect(shapes.of([1])).toBe(-1);
    expect(defined).toEqual([['a', 'b']]);
  });
});
