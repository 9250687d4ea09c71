// Span attributes: a small plain object of string, number or boolean values,
// carried as JSON object text (the form the core stores and splices into
// outputs without re-parsing).

import { describe } from '../common/errors';
import { wellFormed } from '../common/names';

/** An attribute value: a string, a number (kept as given) or a boolean. */
export type AttrValue = string | number | boolean;
/** A span's attributes: a flat object of string, number and boolean values. */
export type Attributes = Readonly<Record<string, AttrValue>>;

/** The attribute keys the writers use themselves; an attribute may not shadow them. */
const RESERVED = new Set(['span_id', 'parent_id', 'error', 'abandoned']);

/** Whether an attribute may not use `key` (the writers' own keys). */
export function isReservedKey(key: string): boolean {
  return RESERVED.has(key);
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Validates `attrs` and returns its JSON text. Throws TypeError/RangeError naming the offending value. */
export function attrsToJson(attrs: unknown): string {
  if (typeof attrs !== 'object' || attrs === null || !isPlainObject(attrs)) {
    throw new TypeError(`hotspan: attributes must be a plain object, got ${describe(attrs)}`);
  }
  let obj = attrs as Record<string, unknown>;
  let clean = true;
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    if (wellFormed(key) !== key || (typeof v === 'string' && wellFormed(v) !== v)) clean = false;
    if (isReservedKey(key)) {
      throw new RangeError(`hotspan: attribute name "${key}" is reserved (span_id, parent_id, error, abandoned)`);
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) {
        throw new RangeError(`hotspan: attribute "${key}" must be a finite number, got ${String(v)}`);
      }
    } else if (typeof v !== 'string' && typeof v !== 'boolean') {
      throw new TypeError(`hotspan: attribute "${key}" must be a string, number or boolean, got ${describe(v)}`);
    }
  }
  if (!clean) {
    // Lone surrogates become U+FFFD (./names wellFormed), not JSON escapes.
    const fixed: Record<string, unknown> = {};
    for (const key of Object.keys(obj)) {
      const v = obj[key];
      fixed[wellFormed(key)] = typeof v === 'string' ? wellFormed(v) : v;
    }
    obj = fixed;
  }
  return JSON.stringify(obj);
}

/** Parses stored attribute text back; undefined for empty text. */
export function attrsFromJson(text: string): Attributes | undefined {
  if (text === '' || text === '{}') return undefined;
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  return Object.freeze(parsed as Record<string, AttrValue>);
}
