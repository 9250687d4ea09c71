// The public record types and their conversion from the columnar snapshot
// both backends produce (NativeSnapshot).

import { attrsFromJson, type Attributes } from '../attrs/attrs';
import {
  FIELDS_PER_RECORD,
  FIELD_DEPTH_FLAGS,
  FIELD_LOCAL,
  FIELD_NAME,
  FIELD_PARENT_LOCAL,
  FIELD_PARENT_TIMELINE,
  FIELD_TIMELINE,
  FLAG_ABANDONED,
  FLAG_ASYNC,
  FLAG_ERROR,
  spanId,
} from '../common/flags';
import type { NativeSnapshot } from '../binding/native-binding';

/** What records on a timeline: 'js' (a JS thread), 'native' (a native thread), 'track' (async spans) or 'groups'. */
export type TimelineKind = 'js' | 'native' | 'track' | 'groups';

/** A timeline: a recording thread, a track, or the groups. */
export interface TimelineInfo {
  /** The timeline id, as in SpanRecord.timeline. */
  readonly id: number;
  /** Its display name (a thread name, `native: <name>`, a track name). */
  readonly name: string;
  /** What records on it. */
  readonly kind: TimelineKind;
  /** Its thread exited / its env closed. */
  readonly exited: boolean;
}

/** One committed span. Times in ms on the performance.now() axis. */
export interface SpanRecord {
  /** The span's name. */
  readonly name: string;
  /** Start, in ms on the performance.now() axis. */
  readonly start: number;
  /** End, in ms on the performance.now() axis. */
  readonly end: number;
  /** end - start, in ms. */
  readonly duration: number;
  /** The id of the timeline the span is on. */
  readonly timeline: number;
  /** That timeline's name. */
  readonly timelineName: string;
  /** That timeline's kind. */
  readonly timelineKind: TimelineKind;
  /** timeline * 2^32 + local id: unique per tracer. */
  readonly id: number;
  /** Parent span id; 0: none. */
  readonly parent: number;
  /** Nesting depth on its thread: 0 for a span with no open span around it. */
  readonly depth: number;
  /** The span ended with an error: its function threw, its promise rejected, or `end({ error: true })`. */
  readonly error: boolean;
  /** The span was ended by cleanup, not by the program: a collected handle, or its worker's exit. */
  readonly abandoned: boolean;
  /** An async span, on a track. */
  readonly async: boolean;
  /** Its attributes, when it has any. */
  readonly attrs?: Attributes;
}

export function toTimelines(snap: NativeSnapshot): readonly TimelineInfo[] {
  return Object.freeze(
    snap.timelines.map((t) => Object.freeze({ id: t.id, name: t.name, kind: t.kind, exited: t.exited })),
  );
}

export function toRecords(snap: NativeSnapshot): readonly SpanRecord[] {
  const tl = new Map<number, { name: string; kind: TimelineKind }>();
  for (const t of snap.timelines) tl.set(t.id, { name: t.name, kind: t.kind });
  const attrs = new Map<number, string>();
  for (const [index, text] of snap.attrs) attrs.set(index, text);
  const { times, fields, names } = snap;
  const out: SpanRecord[] = new Array<SpanRecord>(snap.count);
  for (let i = 0; i < snap.count; i++) {
    const f = i * FIELDS_PER_RECORD;
    const timeline = fields[f + FIELD_TIMELINE];
    const parentTimeline = fields[f + FIELD_PARENT_TIMELINE];
    const parentLocal = fields[f + FIELD_PARENT_LOCAL];
    const depthFlags = fields[f + FIELD_DEPTH_FLAGS];
    const flags = depthFlags & 0xffff;
    const start = times[2 * i];
    const end = times[2 * i + 1];
    const info = tl.get(timeline);
    const text = attrs.get(i);
    // Object literals of two fixed shapes (no spread): V8 builds them fast.
    const name = names[fields[f + FIELD_NAME]] ?? '?';
    const timelineName = info ? info.name : '?';
    const timelineKind = info ? info.kind : 'js';
    const id = spanId(timeline, fields[f + FIELD_LOCAL]);
    const parent = parentLocal === 0 ? 0 : spanId(parentTimeline, parentLocal);
    const depth = depthFlags >>> 16;
    const error = (flags & FLAG_ERROR) !== 0;
    const abandoned = (flags & FLAG_ABANDONED) !== 0;
    const async = (flags & FLAG_ASYNC) !== 0;
    const rec: SpanRecord =
      text === undefined
        ? { name, start, end, duration: end - start, timeline, timelineName, timelineKind, id, parent, depth, error, abandoned, async }
        : { name, start, end, duration: end - start, timeline, timelineName, timelineKind, id, parent, depth, error, abandoned, async, attrs: attrsFromJson(text) };
    out[i] = Object.freeze(rec);
  }
  return Object.freeze(out);
}
