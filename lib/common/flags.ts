// Span flags (the core's SpanFlags: the facade decodes them from
// NativeSnapshot.fields and the js backend writes the same bits) and status
// codes (NativeStatus: the C ABI's hotspan_status). Plain constants, not a
// const enum: per-file transforms (vitest) do not inline a const enum across files.
// <generated from schema/boundary.json by scripts/gen-boundary.mjs (npm run gen)>
/** Span flag: async span (lives on an async track). */
export const FLAG_ASYNC = 1;
/** Span flag: ended by cleanup, not by the caller. */
export const FLAG_ABANDONED = 2;
/** Span flag: the traced function threw / the promise rejected. */
export const FLAG_ERROR = 4;
/** Span flag: has an attribute blob (see Timeline::attrs). */
export const FLAG_ATTRS = 8;
/** Span flag: parent lives on another timeline (async), or is given (foreign_parents). */
export const FLAG_PARENT_ELSEWHERE = 16;
/** Span flag: carries a stored trace context (see Timeline::add_context). */
export const FLAG_CONTEXT = 32;
/** Status code: done. */
export const STATUS_OK = 0;
/** Status code: the tracer was closed; nothing recorded. */
export const STATUS_CLOSED = 1;
/** Status code: end() with no open span on this thread; nothing changed. */
export const STATUS_NO_OPEN_SPAN = 2;
/** Status code: bad argument: unknown name, track, token or thread state, NULL pointer. */
export const STATUS_INVALID = 3;
/** NativeSnapshot.fields, per record: the span's name id. */
export const FIELD_NAME = 0;
/** NativeSnapshot.fields, per record: the id of the timeline that holds it. */
export const FIELD_TIMELINE = 1;
/** NativeSnapshot.fields, per record: its local id on that timeline. */
export const FIELD_LOCAL = 2;
/** NativeSnapshot.fields, per record: its parent's timeline (0: no parent). */
export const FIELD_PARENT_TIMELINE = 3;
/** NativeSnapshot.fields, per record: its parent's local id. */
export const FIELD_PARENT_LOCAL = 4;
/** NativeSnapshot.fields, per record: depth << 16 | span flags. */
export const FIELD_DEPTH_FLAGS = 5;
/** uint32 fields per record in NativeSnapshot.fields. */
export const FIELDS_PER_RECORD = 6;
// </generated>

/** 2^32: span id = timeline * 2^32 + local id, exact in a JS number while timeline < 2^21. */
export const TIMELINE_SHIFT = 4294967296;

export function spanId(timeline: number, local: number): number {
  return timeline * TIMELINE_SHIFT + local;
}
