// hotspan: a span tracer for Node.js with a C++ core.

export { Tracer } from './tracer/tracer';
export type { TraceAsyncOptions, TrackOptions, SettleOptions, JoinOptions } from './tracer/tracer';
export type { DumpOnOptions, KeepOptions, SampleOptions, TracerOptions } from './tracer/options';
export type { DumpSummary } from './tracer/dump';
export type { StreamOptions, StreamStatus } from './tracer/stream';
export type { ProfileOptions, CpuProfileHandle } from './tracer/cpu-profile';
export { TraceStream } from './tracer/stream';
export type { BackendKind } from './backends/backend';
export type { SpanRecord, TimelineInfo, TimelineKind } from './read/records';
export type { StatsRow } from './read/stats';
export type { SnapshotOptions, SnapshotBatchOptions, SnapshotColumns } from './read/bounded-read';
export type { Counts, DumpOnCounts, TimelineCounts } from './common/counts';
export type { OtlpExportOptions } from './otlp/otlp-config';
export type { OtlpCounts } from './otlp/otlp-counters';
export type { Attributes, AttrValue } from './attrs/attrs';
export type { SpanContext, HeaderCarrier } from './tracer/trace-context';
export { SpanHandle } from './tracer/handles';
export type { EndOptions } from './tracer/handles';
export { Query, SpanList, GroupView, GroupSet } from './read/query';
export { formatStats } from './read/table';
