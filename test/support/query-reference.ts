// The query API as it was before the core evaluated it (lib/read/query.ts at
// e82a893, pure TS over SpanRecord[]): the oracle test/query-engine.test.ts
// compares the core's answers with. Kept verbatim apart from this header
// and its imports, so it stays what users saw.
//
// Group membership is by time: a span belongs to a group when it begins while
// the group is open (group.start <= span.start < group.end), on any timeline.
// So a timeline created inside a group starts inside it, and device spans that
// finish after their step closed still count for the step they began in.

import type { SpanRecord, TimelineInfo } from '../../lib/read/records';
import { describe } from '../../lib/common/errors';

function byStart(a: SpanRecord, b: SpanRecord): number {
  return a.start - b.start || a.id - b.id;
}

function pick<T>(items: readonly T[], index: number, what: string): T {
  if (!Number.isInteger(index)) throw new TypeError(`hotspan: index must be an integer, got ${describe(index)}`);
  const i = index < 0 ? items.length + index : index;
  const item = items[i];
  if (item === undefined) {
    throw new RangeError(`hotspan: no ${what} at index ${String(index)} (${String(items.length)} recorded)`);
  }
  return item;
}

/** Merged [start, end] intervals of the records, in start order. */
function union(records: readonly SpanRecord[], lo = -Infinity, hi = Infinity): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const r of records) {
    const s = Math.max(r.start, lo);
    const e = Math.min(r.end, hi);
    if (e < s) continue;
    const last = out[out.length - 1];
    if (last !== undefined && s <= last[1]) {
      if (e > last[1]) last[1] = e;
    } else {
      out.push([s, e]);
    }
  }
  return out;
}

/** Spans in start order, with the numbers step metrics need. */
export class SpanList implements Iterable<SpanRecord> {
  readonly records: readonly SpanRecord[];

  constructor(records: readonly SpanRecord[], sorted = false) {
    this.records = Object.freeze(sorted ? records.slice() : records.slice().sort(byStart));
  }

  get count(): number {
    return this.records.length;
  }

  [Symbol.iterator](): Iterator<SpanRecord> {
    return this.records[Symbol.iterator]();
  }

  first(): SpanRecord {
    return pick(this.records, 0, 'span');
  }
  last(): SpanRecord {
    return pick(this.records, -1, 'span');
  }
  /** 0-based; negative counts from the end. */
  nth(index: number): SpanRecord {
    return pick(this.records, index, 'span');
  }

  named(name: string): SpanList {
    return new SpanList(this.records.filter((r) => r.name === name), true);
  }

  /** Durations in ms, in start order. */
  durations(): number[] {
    return this.records.map((r) => r.duration);
  }
  total(): number {
    let t = 0;
    for (const r of this.records) t += r.duration;
    return t;
  }
  /** NaN when empty. */
  mean(): number {
    return this.records.length === 0 ? NaN : this.total() / this.records.length;
  }
  min(): number {
    return this.records.length === 0 ? NaN : Math.min(...this.durations());
  }
  max(): number {
    return this.records.length === 0 ? NaN : Math.max(...this.durations());
  }

  /** Time covered by at least one span (overlaps counted once), ms. */
  busy(): number {
    let t = 0;
    for (const [s, e] of union(this.records)) t += e - s;
    return t;
  }

  /** Idle gaps between consecutive busy stretches (overlaps merged), ms, in time order. */
  gaps(): number[] {
    const u = union(this.records);
    const out: number[] = [];
    for (let i = 1; i < u.length; i++) out.push(u[i][0] - u[i - 1][1]);
    return out;
  }
}

/** One recorded group (a phase such as one training step). */
export class GroupView {
  constructor(
    readonly record: SpanRecord,
    private readonly query: Query,
  ) {}

  get name(): string {
    return this.record.name;
  }
  get start(): number {
    return this.record.start;
  }
  get end(): number {
    return this.record.end;
  }
  get duration(): number {
    return this.record.duration;
  }

  private contains(r: SpanRecord): boolean {
    return r.start >= this.record.start && r.start < this.record.end;
  }

  /** Spans (all timelines of the query, groups excluded) that began inside this group. */
  spans(name?: string): SpanList {
    const list = this.query.spans(name).records.filter((r) => this.contains(r));
    return new SpanList(list, true);
  }

  /** Groups nested inside this one. */
  groups(name?: string): GroupSet {
    const inner = this.query
      .groupRecords()
      .filter((g) => g !== this.record && g.depth > this.record.depth && this.contains(g))
      .filter((g) => name === undefined || g.name === name);
    return new GroupSet(inner, this.query, name ?? '*');
  }

  /** Idle gaps between the group's spans (optionally of one name), ms. */
  gaps(name?: string): number[] {
    return this.spans(name).gaps();
  }

  /** Time inside the group covered by none of its spans (optionally of one name), ms. */
  idle(name?: string): number {
    let busy = 0;
    for (const [s, e] of union(this.spans(name).records, this.start, this.end)) busy += e - s;
    return this.duration - busy;
  }
}

/** The groups of one name, in start order. */
export class GroupSet implements Iterable<GroupView> {
  private readonly views: readonly GroupView[];

  constructor(
    records: readonly SpanRecord[],
    query: Query,
    private readonly label: string,
  ) {
    this.views = Object.freeze(records.slice().sort(byStart).map((r) => new GroupView(r, query)));
  }

  get count(): number {
    return this.views.length;
  }
  [Symbol.iterator](): Iterator<GroupView> {
    return this.views[Symbol.iterator]();
  }
  all(): readonly GroupView[] {
    return this.views;
  }
  first(): GroupView {
    return pick(this.views, 0, `group "${this.label}"`);
  }
  last(): GroupView {
    return pick(this.views, -1, `group "${this.label}"`);
  }
  /** 0-based; negative counts from the end. */
  nth(index: number): GroupView {
    return pick(this.views, index, `group "${this.label}"`);
  }
  durations(): number[] {
    return this.views.map((g) => g.duration);
  }
}

/** A read-only view over one snapshot. */
export class Query {
  private readonly spanRecords: readonly SpanRecord[];
  private readonly groupList: readonly SpanRecord[];

  constructor(
    records: readonly SpanRecord[],
    private readonly timelineList: readonly TimelineInfo[],
    groups?: readonly SpanRecord[],
  ) {
    this.spanRecords = Object.freeze(records.filter((r) => r.timelineKind !== 'groups').sort(byStart));
    this.groupList = groups ?? Object.freeze(records.filter((r) => r.timelineKind === 'groups').sort(byStart));
  }

  timelines(): readonly TimelineInfo[] {
    return this.timelineList;
  }

  /** Spans of every timeline (groups excluded), optionally of one name. */
  spans(name?: string): SpanList {
    if (name === undefined) return new SpanList(this.spanRecords, true);
    return new SpanList(this.spanRecords.filter((r) => r.name === name), true);
  }

  /**
   * The same query restricted to one timeline: by id, by display name, or by
   * track name ("gpu0" for "track: gpu0"). Groups stay visible.
   */
  timeline(which: number | string): Query {
    let info: TimelineInfo | undefined;
    if (typeof which === 'number') info = this.timelineList.find((t) => t.id === which);
    else if (typeof which === 'string') {
      info =
        this.timelineList.find((t) => t.name === which) ??
        this.timelineList.find((t) => t.kind === 'track' && t.name === `track: ${which}`);
    } else {
      throw new TypeError(`hotspan: timeline must be an id or a name, got ${describe(which)}`);
    }
    if (info === undefined) {
      const known = this.timelineList.map((t) => `${String(t.id)} "${t.name}"`).join(', ');
      throw new RangeError(`hotspan: no timeline ${JSON.stringify(which)} (known: ${known})`);
    }
    const id = info.id;
    return new Query(
      this.spanRecords.filter((r) => r.timeline === id),
      this.timelineList,
      this.groupList,
    );
  }

  /** Group records, start order. */
  groupRecords(): readonly SpanRecord[] {
    return this.groupList;
  }

  /** The recorded groups of one name. */
  group(name: string): GroupSet {
    if (typeof name !== 'string') throw new TypeError(`hotspan: group name must be a string, got ${describe(name)}`);
    return new GroupSet(this.groupList.filter((g) => g.name === name), this, name);
  }

  /** Every recorded group. */
  groups(): GroupSet {
    return new GroupSet(this.groupList, this, '*');
  }

  /** The innermost group open when `span` began, if any. */
  groupOf(span: SpanRecord): GroupView | undefined {
    let best: SpanRecord | undefined;
    for (const g of this.groupList) {
      if (span.start >= g.start && span.start < g.end && span !== g && (best === undefined || g.depth > best.depth)) {
        best = g;
      }
    }
    return best === undefined ? undefined : new GroupView(best, this);
  }
}
