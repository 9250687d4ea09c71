// Which form each call to a NativeTracer's begin() / asyncBegin() took
// (native/addon/span_calls.h): the tests that check the facade sends
// attribute values through the views wrap the two entry points with this.
import { TAG_LOCAL_ARGS, TAG_LOCAL_VALUES, TAG_NAME_ARGS, TAG_NAME_VIEW, type NativeTracer } from '../../lib/binding/native-binding';

/**
 * A call's form: 'view' (begin()'s view form), 'staged' (begin() of a
 * staged name id), 'async view' (asyncBegin()'s values form), 'async plain',
 * or for the slots argument forms the number of values passed as arguments;
 * 'other' for the remaining argument forms.
 */
export type SpanForm = 'view' | 'staged' | 'async view' | 'async plain' | 'other' | number;

/** Wraps nt.begin and nt.asyncBegin so each call appends its form to `calls`. */
export function recordForms(nt: NativeTracer, calls: SpanForm[]): void {
  const state = nt.stateView();
  const asyncArgs = nt.asyncView();
  const begin = nt.begin.bind(nt) as (...a: unknown[]) => number | undefined;
  const asyncBegin = nt.asyncBegin.bind(nt) as (...a: unknown[]) => number | undefined;
  const loose = nt as unknown as Record<string, unknown>;
  loose.begin = (...a: unknown[]) => {
    if (a.length === 0) calls.push(state?.[4] === TAG_NAME_VIEW ? 'view' : 'staged');
    else calls.push(typeof a[1] === 'number' ? a.length - 2 : 'other');
    return begin(...a);
  };
  loose.asyncBegin = (...a: unknown[]) => {
    if (a.length === 0) calls.push(asyncArgs?.[4] === TAG_LOCAL_VALUES ? 'async view' : 'async plain');
    else calls.push(typeof a[2] === 'number' ? a.length - 3 : 'other');
    return asyncBegin(...a);
  };
}

// The argument and view forms called directly, each with the tag that
// selects it written first (a facade-owned tracer has lent its views).
type Loose = (...a: unknown[]) => number | undefined;
const loose = (f: unknown): Loose => f as Loose;

/** begin(nameId, code, v0 .. v3): the slots form. */
export function beginSlots(nt: NativeTracer, ...a: unknown[]): number | undefined {
  const state = nt.stateView();
  if (state !== undefined) state[4] = TAG_NAME_ARGS;
  return loose(nt.begin).call(nt, ...a);
}

/** begin() with the name id and the code in the slot view: the view form. */
export function beginView(nt: NativeTracer): number | undefined {
  const state = nt.stateView();
  if (state !== undefined) state[4] = TAG_NAME_VIEW;
  return nt.begin();
}

/** asyncBegin(track, nameId, code, v0 .. v3): the slots form. */
export function asyncBeginSlots(nt: NativeTracer, ...a: unknown[]): number | undefined {
  const args = nt.asyncView();
  if (args !== undefined) args[4] = TAG_LOCAL_ARGS;
  return loose(nt.asyncBegin).call(nt, ...a);
}

/** asyncBegin() with track and name in the async view, code and values in the slot view: the values form. */
export function asyncBeginValuesView(nt: NativeTracer): undefined {
  const args = nt.asyncView();
  if (args !== undefined) args[4] = TAG_LOCAL_VALUES;
  return nt.asyncBegin();
}
