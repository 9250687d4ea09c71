// hotspan: a span tracer for Node.js with a C++ core.

export { Tracer } from './tracer';
export type { TraceAsyncOptions, TrackOptions, SettleOptions, JoinOptions } from './tracer';
export type { TracerOptions } from './options';
export type { DumpSummary } from './dump';
export type { StreamOptions, StreamStatus } from './stream';
export { TraceStream } from './stream';
export type { BackendKind } from './backend';
export type { SpanRecord, TimelineInfo, TimelineKind } from './records';
export type { StatsRow } from './stats';
export type { SnapshotOptions, SnapshotBatchOptions, SnapshotColumns } from './bounded-read';
export type { Counts, TimelineCounts } from './counts';
export type { OtlpExportOptions } from './otlp-config';
export type { OtlpCounts } from './otlp-counters';
export type { Attributes, AttrValue } from './attrs';
export type { SpanContext, HeaderCarrier } from './trace-context';
export { SpanHandle } from './handles';
export type { EndOptions } from './handles';
export { Query, SpanList, GroupView, GroupSet } from './query';
export { formatStats } from './table';
