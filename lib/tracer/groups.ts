// tracer.group(): a span group around a function, ended when the function
// returns, throws, or (for a returned promise) settles; only the innermost
// open group may end.

import type { Backend } from '../backends/backend';
import { isThenable } from './async-spans';

function endAt(b: Backend, depth: number, label: string): void {
  const open = b.openGroups();
  if (open > depth) {
    throw new Error(
      `hotspan: group "${label}" is not the innermost open group (${String(open - depth)} opened inside it still open); nothing was changed`,
    );
  }
  if (open < depth) throw new Error(`hotspan: group "${label}" was already ended by groupEnd()`);
  b.groupEnd();
}

/**
 * Runs `fn` in the group `begin` opened. `backend` is asked again at the
 * end: close() or the async context may have swapped it meanwhile.
 */
export function inGroup<T>(backend: () => Backend, begin: () => void, label: string, fn: () => T): T {
  begin();
  const depth = backend().openGroups();
  let value: T;
  try {
    value = fn();
  } catch (e) {
    try {
      endAt(backend(), depth, label);
    } catch {
      // The caller's exception matters more.
    }
    throw e;
  }
  if (isThenable(value)) {
    return Promise.resolve(value).then(
      (v) => {
        endAt(backend(), depth, label);
        return v;
      },
      (reason: unknown) => {
        try {
          endAt(backend(), depth, label);
        } catch {
          // Keep the rejection reason.
        }
        throw reason;
      },
    ) as T;
  }
  endAt(backend(), depth, label);
  return value;
}
