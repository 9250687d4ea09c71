// The noop backend (tunix's NoopTracer): the same surface, no work. Every
// recording call is accepted and nothing is recorded.

import type { Backend, Given, OpenIds } from './backend';
import { calibrate, readClocks } from '../common/clock';
import type { NativeSnapshot, NativeTracer } from '../binding/native-binding';
import { STATUS_OK } from '../common/flags';
import { writeDocument, writeDocumentNow, type OutputFormat, type WrittenFile } from '../common/output';
import type { BackendCounts } from '../common/counts';
import type { StatsRow } from '../read/stats';
import { columnsView, type FrozenView } from '../read/frozen-view';
import { writeColumns } from '../binding/wasm-core';

const EMPTY: NativeSnapshot = Object.freeze({
  names: [],
  timelines: [],
  count: 0,
  times: new Float64Array(0),
  fields: new Uint32Array(0),
  attrs: [],
});

export class NoopBackend implements Backend {
  readonly kind = 'noop' as const;
  readonly clockBoundMs = 0;

  begin(_nameId: number): void {}
  beginValues(_nameId: number, _attrs: unknown): boolean {
    return false;
  }

  beginAttrs(_nameId: number, _attrsJson: string): void {}
  end(): void {}
  endFlags(_flags: number): void {}
  beginDepth(_nameId: number): number {
    return 0;
  }
  endAt(_depth: number, _flags: number, _name: number | string): void {}
  intern(_name: string): number {
    return 0;
  }
  openDepth(): number {
    return 0;
  }
  innermost(): number {
    return 0;
  }

  lastBegun(): number {
    return -1;
  }
  now(): number {
    return performance.now();
  }
  track(_name: string, _serial: boolean): number {
    return 0;
  }
  asyncBeginValues(_track: number, _nameId: number, _attrs: unknown): number {
    return 0;
  }

  asyncBegin(_track: number, _nameId: number, _attrsJson: string): number {
    return 0;
  }
  asyncEnd(_token: number, _flags: number): number {
    return STATUS_OK;
  }
  openAsync(): Array<[number, string]> {
    return [];
  }
  groupBegin(_nameId: number, _attrsJson: string): void {}
  counter(_name: string, _value: number): void {}
  groupEnd(): void {}
  openGroups(): number {
    return 0;
  }
  flush(): void {}
  lost(): number {
    return 0;
  }
  pending(): number {
    return 0;
  }
  snapshot(): NativeSnapshot {
    return EMPTY;
  }
  freeze(): FrozenView {
    return columnsView(EMPTY, 0n);
  }
  stats(): readonly StatsRow[] {
    return [];
  }
  counts(): BackendCounts {
    return { lost: false, limit: 0, onFull: 'drop', timelines: [] };
  }
  // The core's documents of no records.
  chromeJson(): Uint8Array {
    return writeColumns(EMPTY, new Set(), 'json', readClocks(), calibrate().originNs);
  }
  perfetto(): Uint8Array {
    return writeColumns(EMPTY, new Set(), 'perfetto', readClocks(), calibrate().originNs);
  }
  writeFile(path: string, format: OutputFormat): Promise<WrittenFile> {
    return writeDocument(this, path, format, { spans: 0, timelines: 0 });
  }
  writeFileNow(path: string, format: OutputFormat): WrittenFile {
    return writeDocumentNow(this, path, format, { spans: 0, timelines: 0 });
  }
  share(): string {
    throw new Error('hotspan: share() needs the native or js backend (cross-worker joining); this tracer runs the noop backend');
  }
  nativeApi(): unknown {
    throw new Error('hotspan: nativeApi() needs the native backend; this tracer runs the noop backend');
  }
  beginContext(_nameId: number, _attrsJson: string, _given: Given): void {}
  asyncBeginContext(_track: number, _nameId: number, _attrsJson: string, _given: Given): number {
    return this.asyncBegin(0, 0, '');
  }
  asyncFinish(_token: number, _flags: number, _startMs: number, _endMs: number, _nameId: number, _attrsJson?: string): number {
    return STATUS_OK;
  }
  /** The noop backend records nothing, so no span has ids. */
  openIds(): OpenIds | undefined {
    return undefined;
  }
  idsOf(_span: number): BigUint64Array {
    return new BigUint64Array(4);
  }
  native(): NativeTracer | undefined {
    return undefined;
  }
  close(): void {}
}
