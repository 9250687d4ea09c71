// The native backend's attribute fast path, facade side: an attribute
// object whose keys were seen before (a few keys, in the same order) maps
// to a shape id the addon knows, and its values go to the addon in the
// slot view or as arguments (./attr-value-ids), stored there as typed
// slots (native/addon/attr_values.h). No JSON, no per-key checks on the
// common path: keys are checked once, when their shape is made; values by
// the addon, which refuses what is not a finite number, a string or a
// boolean. One walk over the object finds the shape and places the values. Anything without a fast form
// (another prototype, more than 4 keys, a reserved or ill-formed key, a
// refused value, shapes past the addon's limit) takes the JSON path, whose
// checks throw the errors of ./attrs.

import { isReservedKey } from './attrs';
import { shapeCode, type AttrValueIds } from './attr-value-ids';

// Called on the for-in key inside the loop, TurboFan folds it into the
// loop's own map check: free, where for-in walks the enum cache (only own
// keys); it is false for the inherited keys a generic walk also yields.
const hasOwn = Object.prototype.hasOwnProperty;

/** The most values a shape has (SlotShapes::kMaxSlots): a node this deep has only poisoned children. */
const MAX_SLOTS = 4;
/** DefineShape's answer when the addon holds its limit of shapes. */
const NO_SHAPE = -1;
/** Trie nodes kept at most (objects with ever new keys stop growing it). */
const MAX_NODES = 4 * 4096;

interface ShapeNode {
  /** Keys from the root to here. */
  readonly keys: readonly string[];
  /** shapeCode of exactly these keys; -1: not made yet; -2: no fast form. */
  code: number;
  /** A reserved or ill-formed key on the way here: no shape through it has a fast form. */
  readonly poisoned: boolean;
  readonly next: Map<string, ShapeNode>;
  /**
   * The two children found last, and their keys: objects repeat a few
   * shapes (a request span's and its sections' share the root), so the Map
   * is rarely asked.
   */
  lastKey: string | undefined;
  lastNext: ShapeNode | undefined;
  prevKey: string | undefined;
  prevNext: ShapeNode | undefined;
}

function newNode(keys: readonly string[], code: number, poisoned: boolean): ShapeNode {
  return {
    keys,
    code,
    poisoned,
    next: new Map(),
    lastKey: undefined,
    lastNext: undefined,
    prevKey: undefined,
    prevNext: undefined,
  };
}

/** step()'s answer past MAX_NODES: poisoned, as a shape with no fast form. */
const DEAD = newNode([], -2, true);

export class AttrShapes {
  private readonly root: ShapeNode = newNode([], -2, false);
  private nodes = 0;
  /** The values of the last object of() that cross as arguments (SlotKind ARGUMENT), by slot. */
  readonly args: unknown[] = [undefined, undefined, undefined, undefined];

  /**
   * @param define the addon's defineShape: keys -> shape id, or -1
   * @param ids how values cross
   */
  constructor(
    private readonly define: (keys: string[]) => number,
    private readonly ids: AttrValueIds,
  ) {}

  /** The slot code of `attrs` (its values placed: view or `args`), or -1: no fast form. */
  of(attrs: unknown): number {
    if (typeof attrs !== 'object' || attrs === null) return -1;
    const proto: unknown = Object.getPrototypeOf(attrs);
    if (proto !== Object.prototype && proto !== null) return -1;
    const obj = attrs as Record<string, unknown>;
    const ids = this.ids;
    let node = this.root;
    let n = 0;
    let kinds = 0;
    // for-in walks the object's enum cache: no key array, and the loads
    // below are by enum-cache index, not a megamorphic keyed load.
    for (const k in obj) {
      // An inherited key (a program gave Object.prototype one): own keys only, the JSON path.
      if (!hasOwn.call(obj, k)) return -1;
      node = node.lastKey === k ? (node.lastNext as ShapeNode) : this.step(node, k);
      // Also past MAX_SLOTS keys (grow poisons those nodes): no count to check per key.
      if (node.poisoned) return -1;
      kinds |= ids.kind(n, obj[k], this.args);
      n++;
    }
    // The root's code is -2: no keys, no fast form.
    const code = node.code === -1 ? this.make(node) : node.code;
    return code < 0 ? -1 : code | kinds;
  }

  // Out of of(), which stays small enough for TurboFan to inline into the caller.
  /** The child of `node` by `key` (remembered as its last, the last before as the one before), or DEAD. */
  private step(node: ShapeNode, key: string): ShapeNode {
    const next = node.prevKey === key ? (node.prevNext as ShapeNode) : (node.next.get(key) ?? this.grow(node, key));
    if (next === undefined) return DEAD;
    node.prevKey = node.lastKey;
    node.prevNext = node.lastNext;
    node.lastKey = key;
    node.lastNext = next;
    return next;
  }

  private grow(parent: ShapeNode, key: string): ShapeNode | undefined {
    if (this.nodes >= MAX_NODES) return undefined;
    this.nodes++;
    const poisoned =
      parent.poisoned ||
      parent.keys.length === MAX_SLOTS ||
      isReservedKey(key) ||
      !(key as unknown as { isWellFormed(): boolean }).isWellFormed();
    const node = newNode([...parent.keys, key], poisoned ? -2 : -1, poisoned);
    parent.next.set(key, node);
    return node;
  }

  private make(node: ShapeNode): number {
    const id = this.define([...node.keys]);
    node.code = id === NO_SHAPE ? -2 : shapeCode(id);
    return node.code;
  }
}
