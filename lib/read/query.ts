// The query API over committed records (tunix-style step metrics). Every
// step is evaluated by the core over the stored records
// (native/core/read/snapshot_query.h, through the addon or the WebAssembly core),
// so a query of any size materializes JS objects only for the records it
// returns.
//
// Group membership is by time: a span belongs to a group when it begins while
// the group is open (group.start <= span.start < group.end), on any timeline.
// So a timeline created inside a group starts inside it, and device spans that
// finish after their step closed still count for the step they began in.

import { describe } from '../common/errors';
import type { FrozenView } from './frozen-view';
import { percentileOfSorted } from './percentile';
import { toRecords, type SpanRecord, type TimelineInfo } from './records';

// native/core/read/query_call.h: the ops and the argument layout.
const OP_TOTALS = 1;
const OP_ORDERED = 2;
const OP_NTH = 3;
const OP_UNION = 4;
const OP_DURATIONS = 5;
const OP_GROUP_OF = 6;

/** Which records a step reads. */
interface Scope {
  /** The groups timeline's records instead of every other timeline's. */
  readonly groups: boolean;
  /** A timeline id; -1: every timeline. */
  readonly timeline: number;
  readonly name?: string;
  /** Global index of the group whose [start, end) holds the records' starts; -1: none. */
  readonly within: number;
  readonly minDepth: number;
  /** A span id left out; 0: none. */
  readonly except: number;
  /** Two different names asked for: nothing matches. */
  readonly none?: boolean;
}

const SPANS: Scope = { groups: false, timeline: -1, within: -1, minDepth: 0, except: 0 };

function checkIndex(index: unknown): number {
  if (!Number.isInteger(index)) throw new TypeError(`hotspan: index must be an integer, got ${describe(index)}`);
  return index as number;
}

function checkName(name: unknown, what: string): string {
  if (typeof name !== 'string') throw new TypeError(`hotspan: ${what} must be a string, got ${describe(name)}`);
  return name;
}

function checkPercentile(p: unknown): number {
  if (typeof p !== 'number' || !(p >= 0 && p <= 100)) throw new RangeError(`hotspan: percentile must be a number from 0 to 100, got ${describe(p)}`);
  return p;
}

/** The p-th percentile of durations (ms), nearest rank (lib/read/percentile.ts); NaN when there are none. */
function percentileOf(durations: Float64Array, p: unknown): number {
  const q = checkPercentile(p);
  return percentileOfSorted(durations.sort(), q);
}

function missing(what: string, index: number, count: number): RangeError {
  return new RangeError(`hotspan: no ${what} at index ${String(index)} (${String(count)} recorded)`);
}

/** The frozen records one query reads, and how its results become records. @hidden (the constructors' declarations name it) */
export class QuerySource {
  constructor(
    private readonly view: FrozenView,
    readonly timelineList: readonly TimelineInfo[],
  ) {}

  run(scope: Scope, op: number, a = 0, b = 0): Float64Array {
    if (scope.none === true) return op === OP_TOTALS ? new Float64Array(4) : op === OP_NTH ? Float64Array.of(-1, 0) : new Float64Array(op === OP_UNION ? 1 : 0);
    const args = Float64Array.of(op, scope.groups ? 1 : 0, scope.timeline, scope.within, scope.minDepth, scope.except, a, b);
    return this.view.query(scope.name, args);
  }

  records(indices: Float64Array): readonly SpanRecord[] {
    return toRecords(this.view.readAt(indices));
  }

  record(index: number): SpanRecord {
    return this.records(Float64Array.of(index))[0];
  }
}

/** Spans in start order, with the numbers step metrics need. */
/** A list of spans of a query, answered by the core: only what a step returns becomes JS objects. */
export class SpanList implements Iterable<SpanRecord> {
  private totalsCache?: Float64Array;
  private recordsCache?: readonly SpanRecord[];

  /** @hidden Made by the package, not by users. */
  constructor(
    private readonly source: QuerySource,
    private readonly scope: Scope,
  ) {}

  /** count, total, min, max */
  private totals(): Float64Array {
    this.totalsCache ??= this.source.run(this.scope, OP_TOTALS);
    return this.totalsCache;
  }

  /** Every span of the list, in start order (materialized on first use). */
  get records(): readonly SpanRecord[] {
    this.recordsCache ??= this.source.records(this.source.run(this.scope, OP_ORDERED));
    return this.recordsCache;
  }

  /** How many spans the list holds. */
  get count(): number {
    return this.totals()[0];
  }

  /** Iterates over the spans as records. */
  [Symbol.iterator](): Iterator<SpanRecord> {
    return this.records[Symbol.iterator]();
  }

  /** The first span (throws a RangeError when the list is empty). */
  first(): SpanRecord {
    return this.nth(0);
  }
  /** The last span (throws a RangeError when the list is empty). */
  last(): SpanRecord {
    return this.nth(-1);
  }
  /** 0-based; negative counts from the end. */
  nth(index: number): SpanRecord {
    const i = checkIndex(index);
    const [found, count] = this.source.run(this.scope, OP_NTH, i);
    if (found < 0) throw missing('span', i, count);
    return this.source.record(found);
  }

  /** The spans of this list with that name. */
  named(name: string): SpanList {
    const n = checkName(name, 'span name');
    const none = this.scope.none === true || (this.scope.name !== undefined && this.scope.name !== n);
    return new SpanList(this.source, { ...this.scope, name: n, none });
  }

  /** Durations in ms, in start order. */
  durations(): number[] {
    return Array.from(this.source.run(this.scope, OP_DURATIONS));
  }
  /** The p-th percentile (0..100) of the durations in ms, nearest rank, exact (as `hotspan report`'s); NaN when empty. */
  percentile(p: number): number {
    return percentileOf(this.source.run(this.scope, OP_DURATIONS), p);
  }
  /** The sum of the durations, in ms. */
  total(): number {
    return this.totals()[1];
  }
  /** NaN when empty. */
  mean(): number {
    const [count, total] = this.totals();
    return count === 0 ? NaN : total / count;
  }
  /** The shortest duration, in ms. */
  min(): number {
    const t = this.totals();
    return t[0] === 0 ? NaN : t[2];
  }
  /** The longest duration, in ms. */
  max(): number {
    const t = this.totals();
    return t[0] === 0 ? NaN : t[3];
  }

  /** Time covered by at least one span (overlaps counted once), ms. */
  busy(): number {
    return this.source.run(this.scope, OP_UNION, 0, 0)[0];
  }

  /** Idle gaps between consecutive busy stretches (overlaps merged), ms, in time order. */
  gaps(): number[] {
    return Array.from(this.source.run(this.scope, OP_UNION, 0, 1).subarray(1));
  }

  /** @internal The same spans' busy time clipped to their group's [start, end]. */
  busyWithin(): number {
    return this.source.run(this.scope, OP_UNION, 1, 0)[0];
  }
}

/** One recorded group (a phase such as one training step). */
/** One group (a phase from `group()` or `groupBegin()`/`groupEnd()`) of a query, and the spans that belong to it. */
export class GroupView {
  /** @hidden Made by the package, not by users. */
  constructor(
    /** The group as a record. */
    readonly record: SpanRecord,
    private readonly source: QuerySource,
    private readonly index: number,
    /** The query's spans (its timeline restriction). */
    private readonly base: Scope,
  ) {}

  /** The group's name. */
  get name(): string {
    return this.record.name;
  }
  /** When the group began, in ms on the performance.now() axis. */
  get start(): number {
    return this.record.start;
  }
  /** When the group ended, in ms on the performance.now() axis. */
  get end(): number {
    return this.record.end;
  }
  /** The group's duration, in ms. */
  get duration(): number {
    return this.record.duration;
  }

  /** Spans (all timelines of the query, groups excluded) that began inside this group. */
  spans(name?: string): SpanList {
    const scope: Scope = { ...this.base, within: this.index };
    return new SpanList(this.source, name === undefined ? scope : { ...scope, name: checkName(name, 'span name') });
  }

  /** Groups nested inside this one. */
  groups(name?: string): GroupSet {
    const scope: Scope = { groups: true, timeline: -1, within: this.index, minDepth: this.record.depth + 1, except: this.record.id };
    if (name === undefined) return new GroupSet(this.source, scope, '*', this.base);
    return new GroupSet(this.source, { ...scope, name: checkName(name, 'group name') }, name, this.base);
  }

  /** Idle gaps between the group's spans (optionally of one name), ms. */
  gaps(name?: string): number[] {
    return this.spans(name).gaps();
  }

  /** Time inside the group covered by none of its spans (optionally of one name), ms. */
  idle(name?: string): number {
    return this.duration - this.spans(name).busyWithin();
  }
}

/** The groups of one name, in start order. */
/** The groups of one name, in the order they began. */
export class GroupSet implements Iterable<GroupView> {
  private readonly indices: Float64Array;
  private viewsCache?: readonly GroupView[];

  /** @hidden Made by the package, not by users. */
  constructor(
    private readonly source: QuerySource,
    private readonly scope: Scope,
    private readonly label: string,
    private readonly base: Scope,
  ) {
    this.indices = source.run(scope, OP_ORDERED);
  }

  /** How many groups the set holds. */
  get count(): number {
    return this.indices.length;
  }
  /** Iterates over the groups. */
  [Symbol.iterator](): Iterator<GroupView> {
    return this.all()[Symbol.iterator]();
  }
  /** Every group of the set. */
  all(): readonly GroupView[] {
    if (this.viewsCache === undefined) {
      const records = this.source.records(this.indices);
      this.viewsCache = Object.freeze(records.map((r, k) => new GroupView(r, this.source, this.indices[k], this.base)));
    }
    return this.viewsCache;
  }
  /** The first group (throws a RangeError when the set is empty). */
  first(): GroupView {
    return this.nth(0);
  }
  /** The last group (throws a RangeError when the set is empty). */
  last(): GroupView {
    return this.nth(-1);
  }
  /** 0-based; negative counts from the end. */
  nth(index: number): GroupView {
    const i = checkIndex(index);
    const at = this.indices[i < 0 ? this.indices.length + i : i];
    if (at === undefined) throw missing(`group "${this.label}"`, i, this.indices.length);
    return new GroupView(this.source.record(at), this.source, at, this.base);
  }
  /** Each group's duration, in ms. */
  durations(): number[] {
    return Array.from(this.source.run(this.scope, OP_DURATIONS));
  }
  /** The p-th percentile (0..100) of the groups' durations in ms, nearest rank, exact; NaN when empty. */
  percentile(p: number): number {
    return percentileOf(this.source.run(this.scope, OP_DURATIONS), p);
  }
}

/** A read-only view over one snapshot. */
export class Query {
  private groupCache?: readonly SpanRecord[];

  /** @hidden Made by the package, not by users. */
  constructor(
    private readonly source: QuerySource,
    /** Its spans: every timeline's, or one timeline's. */
    private readonly base: Scope = SPANS,
  ) {}

  /** The timelines of the frozen records. */
  timelines(): readonly TimelineInfo[] {
    return this.source.timelineList;
  }

  /** Spans of every timeline (groups excluded), optionally of one name. */
  spans(name?: string): SpanList {
    const scope = this.base;
    return new SpanList(this.source, name === undefined ? scope : { ...scope, name: checkName(name, 'span name') });
  }

  /**
   * The same query restricted to one timeline: by id, by display name, or by
   * track name ("gpu0" for "track: gpu0"). Groups stay visible.
   */
  timeline(which: number | string): Query {
    const list = this.source.timelineList;
    let info: TimelineInfo | undefined;
    if (typeof which === 'number') info = list.find((t) => t.id === which);
    else if (typeof which === 'string') {
      info = list.find((t) => t.name === which) ?? list.find((t) => t.kind === 'track' && t.name === `track: ${which}`);
    } else {
      throw new TypeError(`hotspan: timeline must be an id or a name, got ${describe(which)}`);
    }
    if (info === undefined) {
      const known = list.map((t) => `${String(t.id)} "${t.name}"`).join(', ');
      throw new RangeError(`hotspan: no timeline ${JSON.stringify(which)} (known: ${known})`);
    }
    // Restricted again to another timeline, it holds nothing, as filtering twice would.
    const none = this.base.none === true || (this.base.timeline >= 0 && this.base.timeline !== info.id);
    return new Query(this.source, { ...this.base, timeline: info.id, none });
  }

  /** Group records, start order. */
  groupRecords(): readonly SpanRecord[] {
    this.groupCache ??= this.source.records(this.source.run({ ...SPANS, groups: true }, OP_ORDERED));
    return this.groupCache;
  }

  /** The recorded groups of one name. */
  group(name: string): GroupSet {
    if (typeof name !== 'string') throw new TypeError(`hotspan: group name must be a string, got ${describe(name)}`);
    return new GroupSet(this.source, { ...SPANS, groups: true, name }, name, this.base);
  }

  /** Every recorded group. */
  groups(): GroupSet {
    return new GroupSet(this.source, { ...SPANS, groups: true }, '*', this.base);
  }

  /** The innermost group open when `span` began, if any. */
  groupOf(span: SpanRecord): GroupView | undefined {
    if (typeof span !== 'object' || span === null || typeof span.start !== 'number') {
      throw new TypeError(`hotspan: groupOf() needs a span record, got ${describe(span)}`);
    }
    const id = typeof span.id === 'number' && Number.isSafeInteger(span.id) && span.id > 0 ? span.id : 0;
    if (!Number.isFinite(span.start)) return undefined;
    const [at] = this.source.run({ ...SPANS, groups: true, except: id }, OP_GROUP_OF, span.start);
    return at < 0 ? undefined : new GroupView(this.source.record(at), this.source, at, this.base);
  }
}
