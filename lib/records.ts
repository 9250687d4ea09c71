// The public record types and their conversion from the columnar snapshot
// both backends produce (NativeSnapshot).

import { attrsFromJson, type Attributes } from './attrs';
import { FIELDS_PER_RECORD, FLAG_ABANDONED, FLAG_ASYNC, FLAG_ERROR, spanId } from './flags';
import type { NativeSnapshot } from './native-binding';

export type TimelineKind = 'js' | 'native' | 'track' | 'groups';

export interface TimelineInfo {
  readonly id: number;
  readonly name: string;
  readonly kind: TimelineKind;
  /** Its thread exited / its env closed. */
  readonly exited: boolean;
}

/** One committed span. Times in ms on the performance.now() axis. */
export interface SpanRecord {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly duration: number;
  readonly timeline: number;
  readonly timelineName: string;
  readonly timelineKind: TimelineKind;
  /** timeline * 2^32 + local id: unique per tracer. */
  readonly id: number;
  /** Parent span id; 0: none. */
  readonly parent: number;
  readonly depth: number;
  readonly error: boolean;
  readonly abandoned: boolean;
  readonly async: boolean;
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
    const timeline = fields[f + 1];
    const parentTimeline = fields[f + 3];
    const parentLocal = fields[f + 4];
    const depthFlags = fields[f + 5];
    const flags = depthFlags & 0xffff;
    const start = times[2 * i];
    const end = times[2 * i + 1];
    const info = tl.get(timeline);
    const text = attrs.get(i);
    // Object literals of two fixed shapes (no spread): V8 builds them fast.
    const name = names[fields[f]] ?? '?';
    const timelineName = info ? info.name : '?';
    const timelineKind = info ? info.kind : 'js';
    const id = spanId(timeline, fields[f + 2]);
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
