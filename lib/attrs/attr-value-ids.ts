// How a span's attribute values cross to the addon (native/addon/attr_values.h):
// per slot, a number or an interned string's id is written into the
// binding's slot view (a Float64Array the addon reads with no Node-API
// call), a boolean goes in the call's code, and anything else (a string not
// interned, a value the addon must check and may refuse) as an argument.
// Interned values: string values repeat in real spans (methods, routes,
// table names), so a value seen before crosses as its id, and the addon
// copies the UTF-8 it stored once instead of reading the JS string again. A
// program whose values never repeat fills the table once; its values then
// cross as arguments, as before.

/** Longest string (UTF-16 units) interned; longer ones cross as arguments. */
const MAX_LENGTH = 64;
/** DefineValue's answer when the addon holds its limit (SlotShapes::kMaxValues). */
const FULL = -1;

// SlotKind, kKindBits and kShapeShift of native/addon/attr_values.h.
const VIEW_NUMBER = 0;
const VIEW_VALUE = 1;
const FALSE = 2;
const TRUE = 3;
const ARGUMENT = 4;
const KIND_BITS = 3;
const SHAPE_SHIFT = 12;
/** Where begin()'s view form reads the name id and the code in the view, asyncBegin()'s values form the code (SlotShapes::kNameAt, kCodeAt). */
const VIEW_NAME = 4;
const VIEW_CODE = 5;
/** The bits of a code that are set when some slot is an ARGUMENT (module-local: a constant in the JIT's code, not a load). */
const ARGUMENTS = 0o4444;

/** True when a call with `code` passes some value as an argument. */
export function hasArguments(code: number): boolean {
  return (code & ARGUMENTS) !== 0;
}

// Unset entries: too long to intern, so id -1 is right for it; a string, so compares stay string compares.
const UNSET = '\u0000'.repeat(MAX_LENGTH + 1);

/**
 * A slot's last 4 values and their ids (a slot cycles through a few:
 * methods, routes), so a repeat needs no Map lookup. Fields, not an array:
 * the 4 compares share one map check and need no bounds checks.
 */
interface Recent {
  v0: string;
  v1: string;
  v2: string;
  v3: string;
  id0: number;
  id1: number;
  id2: number;
  id3: number;
  /** Where the next value goes (round robin). */
  next: number;
}

function newRecent(): Recent {
  return { v0: UNSET, v1: UNSET, v2: UNSET, v3: UNSET, id0: -1, id1: -1, id2: -1, id3: -1, next: 0 };
}

/** The code bits of shape `id` (`| kinds`: a call's code). */
export function shapeCode(id: number): number {
  return id << SHAPE_SHIFT;
}

export class AttrValueIds {
  private readonly ids = new Map<string, number>();
  private full = false;
  /** Per slot, its recent values. */
  private readonly recent: Recent[] = [newRecent(), newRecent(), newRecent(), newRecent()];

  /**
   * @param define the addon's defineValue: string -> id, or -1
   * @param view the addon's slot view; undefined where external buffers are
   *   refused: numbers and strings then cross as arguments
   */
  constructor(
    private readonly define: (value: string) => number,
    private readonly view: Float64Array | undefined,
  ) {}

  /**
   * How value `v` of slot `i` crosses (a SlotKind at slot i's bits): written
   * into the view when it can be, else kept in `args[i]`, an argument.
   */
  kind(i: number, v: unknown, args: unknown[]): number {
    // Shifted here: module-local constants fold, imported ones are loads.
    // Numbers and strings first: the common values pay no boolean test.
    const view = this.view;
    if (view !== undefined) {
      // Non-finite numbers go as arguments: the addon refuses them, and the JSON path names them.
      if (typeof v === 'number') {
        if (v - v === 0) {
          view[i] = v;
          return VIEW_NUMBER;
        }
      } else if (typeof v === 'string') {
        const id = this.idOf(i, v);
        if (id >= 0) {
          view[i] = id;
          return VIEW_VALUE << (KIND_BITS * i);
        }
      }
    }
    if (typeof v === 'boolean') return (v ? TRUE : FALSE) << (KIND_BITS * i);
    args[i] = v;
    return ARGUMENT << (KIND_BITS * i);
  }

  /** True (name and code written to the view) when `code` can begin with begin()'s view form (asyncBegin()'s values form: it reads the code only): no argument. */
  inView(nameId: number, code: number): boolean {
    const view = this.view;
    if (hasArguments(code) || view === undefined) return false;
    view[VIEW_NAME] = nameId;
    view[VIEW_CODE] = code;
    return true;
  }

  /** The interned id of `v` (slot `i`), or -1; the slot's recent values first. */
  private idOf(i: number, v: string): number {
    const r = this.recent[i];
    if (r.v0 === v) return r.id0;
    if (r.v1 === v) return r.id1;
    if (r.v2 === v) return r.id2;
    if (r.v3 === v) return r.id3;
    return this.remember(r, v);
  }

  // Out of idOf: the hit path stays small enough to inline.
  private remember(r: Recent, v: string): number {
    const id = this.ids.get(v) ?? this.add(v);
    switch (r.next++ & 3) {
      case 0:
        r.v0 = v;
        r.id0 = id;
        break;
      case 1:
        r.v1 = v;
        r.id1 = id;
        break;
      case 2:
        r.v2 = v;
        r.id2 = id;
        break;
      default:
        r.v3 = v;
        r.id3 = id;
    }
    return id;
  }

  private add(v: string): number {
    if (this.full || v.length > MAX_LENGTH) return -1;
    const id = this.define(v);
    if (id === FULL) {
      this.full = true;
      return -1;
    }
    this.ids.set(v, id);
    return id;
  }
}
