// Error construction shared by every backend, so the native and js backends
// fail with the same types and texts.

import { STATUS_CLOSED, STATUS_INVALID, STATUS_NO_OPEN_SPAN } from './flags';

/** A short description of a value for error texts: its type, or the value when that is short. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return value.length > 40 ? `string "${value.slice(0, 40)}..."` : `string ${JSON.stringify(value)}`;
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${typeof value} ${String(value)}`;
    case 'function':
      return 'function';
    case 'object': {
      const ctor = (value as { constructor?: { name?: unknown } }).constructor;
      const name = ctor && typeof ctor.name === 'string' ? ctor.name : '';
      return name && name !== 'Object' ? `object (${name})` : 'object';
    }
    default:
      return typeof value;
  }
}

export function closedError(): Error {
  return new Error('hotspan: tracer is closed');
}

export function noOpenSpanError(what: string, noun = 'span'): Error {
  return new Error(`hotspan: ${what} without an open ${noun}; nothing was changed`);
}

export function unknownNameError(id: number): RangeError {
  return new RangeError(`hotspan: unknown name id ${String(id)} (use tracer.name(str) to get an id)`);
}

export function asyncRejectedError(track: number, nameId: number): RangeError {
  return new RangeError(`hotspan: async span rejected: unknown track ${String(track)} or name id ${String(nameId)}`);
}

/** Spans nest at most this deep on one thread (the core stores depth in 16 bits). */
export const MAX_DEPTH = 0xffff;

export function depthError(): RangeError {
  return new RangeError(`hotspan: spans nest deeper than ${String(MAX_DEPTH)} on one thread; nothing was changed`);
}

/** trace()'s span is no longer the innermost one when its callback returns. */
export function traceNestingError(name: number | string, open: number, depth: number): Error {
  const label = typeof name === 'string' ? JSON.stringify(name) : `name id ${String(name)}`;
  return new Error(
    open < depth
      ? `hotspan: trace(${label}): the callback ended the span trace() opened (or one around it) itself; nothing more was ended`
      : `hotspan: trace(${label}): the callback left ${String(open - depth)} span(s) open inside it; nothing was ended`,
  );
}

export function trackKindError(name: string, existingSerial: boolean): RangeError {
  return new RangeError(`hotspan: track "${name}" already exists as a ${existingSerial ? 'serial' : 'concurrent'} track`);
}

export function nameTypeError(value: unknown): TypeError {
  return new TypeError(`hotspan: name must be a string or a name id, got ${describe(value)}`);
}

/** Turns a non-Ok native status into the error the facade throws. */
export function statusError(status: number, what: string, noun = 'span'): Error {
  switch (status) {
    case STATUS_CLOSED:
      return closedError();
    case STATUS_NO_OPEN_SPAN:
      return noOpenSpanError(what, noun);
    case STATUS_INVALID:
      return new RangeError(`hotspan: ${what} was rejected as invalid (unknown name, track or token)`);
    default:
      return new Error(`hotspan: ${what} failed with status ${String(status)}`);
  }
}
