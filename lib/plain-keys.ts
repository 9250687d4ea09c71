// Whether a for-in loop over a plain object sees exactly its own keys:
// for-in walks the object's enum cache (no key array, and keyed loads by
// the loop's key stay fast), but it also walks inherited enumerable keys,
// which Object.prototype has none of unless a program gave it some.

/** True while Object.prototype has no enumerable keys (as it comes). */
export function forInIsOwn(): boolean {
  // eslint-disable-next-line no-unreachable-loop
  for (const _ in Object.prototype) return false;
  return true;
}
