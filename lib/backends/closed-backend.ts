// What a Tracer runs on after close(): recording throws
// `Error: hotspan: tracer is closed`, committed records stay readable.
// Swapping the backend keeps the closed check off the hot path.

import type { Backend, CpuSamples, Given, OpenIds } from './backend';
import { closedError } from '../common/errors';
import type { NativeSnapshot, NativeTracer } from '../binding/native-binding';
import { STATUS_CLOSED } from '../common/flags';
import type { OutputFormat, WrittenFile } from '../common/output';
import type { BackendCounts } from '../common/counts';
import type { StatsRow } from '../read/stats';
import type { FrozenView } from '../read/frozen-view';

export class ClosedBackend implements Backend {
  constructor(private readonly inner: Backend) {}

  get kind(): Backend['kind'] {
    return this.inner.kind;
  }
  get clockBoundMs(): number {
    return this.inner.clockBoundMs;
  }

  begin(_nameId: number): void {
    throw closedError();
  }
  beginValues(_nameId: number, _attrs: unknown): boolean {
    return false;
  }

  beginAttrs(_nameId: number, _attrsJson: string): void {
    throw closedError();
  }
  end(): void {
    throw closedError();
  }
  endFlags(_flags: number): void {
    throw closedError();
  }
  beginDepth(_nameId: number): number {
    throw closedError();
  }
  endAt(_depth: number, _flags: number, _name: number | string): void {
    throw closedError();
  }
  intern(_name: string): number {
    throw closedError();
  }
  openDepth(): number {
    throw closedError();
  }
  innermost(): number {
    throw closedError();
  }

  lastBegun(): number {
    throw closedError();
  }
  now(): number {
    return this.inner.now();
  }
  track(_name: string, _serial: boolean): number {
    throw closedError();
  }
  asyncBeginValues(_track: number, _nameId: number, _attrs: unknown): number {
    return 0;
  }

  asyncBegin(_track: number, _nameId: number, _attrsJson: string): number {
    throw closedError();
  }
  asyncEnd(_token: number, _flags: number): number {
    return STATUS_CLOSED;
  }
  openAsync(): Array<[number, string]> {
    return [];
  }
  groupBegin(_nameId: number, _attrsJson: string): void {
    throw closedError();
  }
  counter(_name: string, _value: number): void {
    throw closedError();
  }
  cpuProfile(_samples: CpuSamples): void {
    throw closedError();
  }
  groupEnd(): void {
    throw closedError();
  }
  openGroups(): number {
    return 0;
  }
  flush(): void {}
  lost(): number {
    return this.inner.lost();
  }
  pending(): number {
    return 0;
  }
  snapshot(): NativeSnapshot {
    return this.inner.snapshot();
  }
  freeze(): FrozenView {
    return this.inner.freeze();
  }
  stats(): readonly StatsRow[] {
    return this.inner.stats();
  }
  counts(): BackendCounts {
    return this.inner.counts();
  }
  chromeJson(): Uint8Array {
    return this.inner.chromeJson();
  }
  perfetto(): Uint8Array {
    return this.inner.perfetto();
  }
  writeFile(path: string, format: OutputFormat): Promise<WrittenFile> {
    return this.inner.writeFile(path, format);
  }
  writeFileNow(path: string, format: OutputFormat): WrittenFile {
    return this.inner.writeFileNow(path, format);
  }
  share(): string {
    throw closedError();
  }
  nativeApi(): unknown {
    throw closedError();
  }
  beginContext(_nameId: number, _attrsJson: string, _given: Given): void {
    throw closedError();
  }
  asyncBeginContext(_track: number, _nameId: number, _attrsJson: string, _given: Given): number {
    throw closedError();
  }
  openIds(): OpenIds | undefined {
    return undefined;
  }
  asyncFinish(_token: number, _flags: number, _startMs: number, _endMs: number, _nameId: number, _attrsJson?: string): number {
    return STATUS_CLOSED;
  }
  idsOf(span: number): BigUint64Array {
    return this.inner.idsOf(span);
  }
  native(): NativeTracer | undefined {
    return this.inner.native();
  }
  close(): void {}
}
