// How a span's attribute values cross to the addon (native/addon/slot_calls.h):
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

// SlotKind, kKindBits and kShapeShift of native/addon/slot_calls.h.
const VIEW_NUMBER = 0;
const VIEW_VALUE = 1;
const FALSE = 2;
const TRUE = 3;
const ARGUMENT = 4;
const KIND_BITS = 3;
const SHAPE_SHIFT = 12;
/** Where beginView reads the name id and the code in the view (SlotShapes::kNameAt, kCodeAt). */
const VIEW_NAME = 4;
const VIEW_CODE = 5;
/** The bits of a code that are set when some slot is an ARGUMENT. */
export const ARGUMENTS = 0o4444;

/** Recent values kept per slot (a slot cycles through a few: methods, routes). */
const RECENT = 4;
// Unset entries: too long to intern, so id -1 is right for it; a string, so compares stay string compares.
const UNSET = '\u0000'.repeat(MAX_LENGTH + 1);

/** The code bits of shape `id` (`| kinds`: a call's code). */
export function shapeCode(id: number): number {
  return id << SHAPE_SHIFT;
}

export class AttrValueIds {
  private readonly ids = new Map<string, number>();
  private full = false;
  /** At i * RECENT + j: slot i's last values and their ids (no Map lookup for a repeat). */
  private readonly recent: string[] = Array.from({ length: 4 * RECENT }, () => UNSET);
  private readonly recentIds: number[] = Array.from({ length: 4 * RECENT }, () => -1);
  /** Per slot, where its next value goes (round robin). */
  private readonly recentNext: number[] = [0, 0, 0, 0];

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
    const at = KIND_BITS * i;
    if (typeof v === 'boolean') return (v ? TRUE : FALSE) << at;
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
          return VIEW_VALUE << at;
        }
      }
    }
    args[i] = v;
    return ARGUMENT << at;
  }

  /** True (name and code written to the view) when `code` can begin with beginView: no argument. */
  inView(nameId: number, code: number): boolean {
    const view = this.view;
    if ((code & ARGUMENTS) !== 0 || view === undefined) return false;
    view[VIEW_NAME] = nameId;
    view[VIEW_CODE] = code;
    return true;
  }

  /** The interned id of `v` (slot `i`), or -1; the slot's recent values first. */
  private idOf(i: number, v: string): number {
    const r = this.recent;
    let j = i * RECENT;
    const end = j + RECENT;
    do if (r[j] === v) return this.recentIds[j];
    while (++j < end);
    return this.remember(i, v);
  }

  // Out of idOf: the hit path stays small enough to inline.
  private remember(i: number, v: string): number {
    const id = this.ids.get(v) ?? this.add(v);
    const j = i * RECENT + (this.recentNext[i]++ & (RECENT - 1));
    this.recent[j] = v;
    this.recentIds[j] = id;
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
