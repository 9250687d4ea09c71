// The native backend's attribute fast path, facade side: an attribute
// object whose keys were seen before (a few keys, in the same order) maps
// to a shape id the addon knows, and its values go to the addon as
// arguments, stored there as typed slots (native/addon/slot_calls.h). No
// JSON, no per-key checks on the common path: keys are checked once, when
// their shape is made; values by the addon, which refuses what is not a
// finite number, a string or a boolean. Anything without a fast form
// (another prototype, more than 4 keys, a reserved or ill-formed key, a
// refused value, shapes past the addon's limit) takes the JSON path, whose
// checks throw the errors of ./attrs.

import { isReservedKey } from './attrs';
import { forInIsOwn } from './plain-keys';

/** The most values a shape has (SlotShapes::kMaxSlots). */
export const MAX_SLOTS = 4;
/** DefineShape's answer when the addon holds its limit of shapes. */
const NO_SHAPE = -1;
/** Trie nodes kept at most (objects with ever new keys stop growing it). */
const MAX_NODES = 4 * 4096;

interface ShapeNode {
  /** Keys from the root to here. */
  readonly keys: readonly string[];
  /** Shape id of exactly these keys; -1: not made yet; -2: no fast form. */
  id: number;
  /** A reserved or ill-formed key on the way here: no shape through it has a fast form. */
  readonly poisoned: boolean;
  readonly next: Map<string, ShapeNode>;
  /** The child found last, and its key: most objects repeat one shape, so the Map is rarely asked. */
  lastKey: string | undefined;
  lastNext: ShapeNode | undefined;
}

function newNode(keys: readonly string[], id: number, poisoned: boolean): ShapeNode {
  return { keys, id, poisoned, next: new Map(), lastKey: undefined, lastNext: undefined };
}

export class AttrShapes {
  private readonly root: ShapeNode = newNode([], -2, false);
  private nodes = 0;
  /** The values of the last object of(): [0, count). */
  readonly values: unknown[] = [undefined, undefined, undefined, undefined];
  /** The key count of the last object of() gave a shape id. */
  count = 0;

  /** @param define the addon's defineShape: keys -> shape id, or -1 */
  constructor(private readonly define: (keys: string[]) => number) {}

  /** The shape id of `attrs` (its values in `values`), or -1: no fast form. */
  of(attrs: unknown): number {
    if (typeof attrs !== 'object' || attrs === null) return -1;
    const proto: unknown = Object.getPrototypeOf(attrs);
    if (proto !== Object.prototype && proto !== null) return -1;
    if (proto !== null && !forInIsOwn()) return -1;
    const obj = attrs as Record<string, unknown>;
    let node = this.root;
    let n = 0;
    // for-in walks the object's enum cache: no key array, and the loads
    // below are by enum-cache index, not a megamorphic keyed load.
    // for-in would also walk inherited enumerable keys: an object over an
    // Object.prototype given one takes the JSON path (own keys only).
    for (const k in obj) {
      if (n === MAX_SLOTS) return -1;
      let next = node.lastKey === k ? node.lastNext : undefined;
      if (next === undefined) {
        next = node.next.get(k) ?? this.grow(node, k);
        if (next === undefined) return -1;
        node.lastKey = k;
        node.lastNext = next;
      }
      node = next;
      this.values[n++] = obj[k];
    }
    if (n === 0) return -1;
    this.count = n;
    return node.id === -1 ? this.make(node) : node.id;
  }

  private grow(parent: ShapeNode, key: string): ShapeNode | undefined {
    if (this.nodes >= MAX_NODES) return undefined;
    this.nodes++;
    const poisoned = parent.poisoned || isReservedKey(key) || !(key as unknown as { isWellFormed(): boolean }).isWellFormed();
    const node = newNode([...parent.keys, key], poisoned ? -2 : -1, poisoned);
    parent.next.set(key, node);
    return node;
  }

  private make(node: ShapeNode): number {
    const id = this.define([...node.keys]);
    node.id = id === NO_SHAPE ? -2 : id;
    return node.id;
  }
}
