// Span flags, as in native/core/record/span_record.h `SpanFlags` (checked by
// test/binding-surface.test.ts). The facade decodes them from
// NativeSnapshot.fields and the js backend writes the same bits.

export const FLAG_ASYNC = 1;
export const FLAG_ABANDONED = 2;
export const FLAG_ERROR = 4;
export const FLAG_ATTRS = 8;
export const FLAG_PARENT_ELSEWHERE = 16;
export const FLAG_CONTEXT = 32;

/** fields per record in NativeSnapshot.fields. */
export const FIELDS_PER_RECORD = 6;

/** 2^32: span id = timeline * 2^32 + local id, exact in a JS number while timeline < 2^21. */
export const TIMELINE_SHIFT = 4294967296;

export function spanId(timeline: number, local: number): number {
  return timeline * TIMELINE_SHIFT + local;
}

// NativeStatus values: native/include/hotspan.h `hotspan_status`, checked
// against it by test/binding-surface.test.ts. Plain constants, not a const
// enum: per-file transforms (vitest) do not inline a const enum across files.
export const STATUS_OK = 0;
export const STATUS_CLOSED = 1;
export const STATUS_NO_OPEN_SPAN = 2;
export const STATUS_INVALID = 3;
