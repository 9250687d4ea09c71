// tracer.stream(): the committed records streamed to a Perfetto file by the
// addon's own thread (native/core/write/trace_stream.h), never this one. This
// module checks the options, turns the thread's write errors into an
// 'error' event, and finishes the file at process exit (lib/common/exit-write.ts).
// A sampling tracer's stream writes its kept traces only (docs/sampling.md).

import { describe } from '../common/errors';
import { atExit } from '../common/exit-write';
import type { NativeStream } from '../binding/native-binding';
import { checkCallOptions } from './options';

/** Options of `tracer.stream(path, options)`. */
export interface StreamOptions {
  /**
   * Rotate: once a file holds this many bytes (it passes it by at most 64
   * spans and its closing counts packet), finish it and begin the next. Files are then
   * `<stem>-1.pftrace`, `<stem>-2.pftrace`, ... instead of `path`. At least 4096.
   */
  rotateBytes?: number;
  /** With rotateBytes: keep the newest `keep` files, deleting older ones (default: all). */
  keep?: number;
}

/** What a stream has done so far (stream.status()). */
export interface StreamStatus {
  /** The path given to stream(). */
  readonly path: string;
  /** The file being written (or the last one). */
  readonly file: string;
  /** Files begun (1 without rotation). */
  readonly files: number;
  /** Bytes written to every file so far (what write() took, also of a write that then failed). */
  readonly bytes: number;
  /**
   * Records (spans, async spans, groups) in the file: write() has taken them,
   * counted by batch (about 1 MiB of file). After a failed write the file may
   * also hold part of the batch it cut short: `bytes` says how much it holds.
   */
  readonly written: number;
  /** Records the memory budget recycled before the stream read them (disk too slow). */
  readonly missed: number;
  /** Records read but lost to a write error (the batches not wholly in the file, a few MiB of output at most, and those waiting below). */
  readonly unwritten: number;
  /**
   * Records of traces the tracer's sampling (`sample`, `sample.keep`) did not
   * keep: read, never written (docs/sampling.md). 0 when the tracer does not sample.
   */
  readonly sampledOut: number;
  /** Records the tail keep released without their root (past maxWaitMs, or at close()): decided by the head sampler alone, also counted in written or sampledOut. */
  readonly keepTimedOut: number;
  /** Records read whose trace is not decided yet (their root has not ended): written or counted in sampledOut once it is. */
  readonly waiting: number;
  /** close() finished the file (or the process exit did). */
  readonly closed: boolean;
  /** The write error that ended the streaming (code, errno, syscall, path), if any. */
  readonly error?: Error;
}

const MIN_ROTATE = 4096;

function checkArgs(path: unknown, options: StreamOptions | undefined): { rotate: number; keep: number } {
  if (typeof path !== 'string' || path.length === 0) {
    throw new TypeError(`hotspan: stream() needs a file path, got ${describe(path)}`);
  }
  if (!path.endsWith('.pftrace')) {
    throw new RangeError(`hotspan: stream() writes a Perfetto trace: the path must end in .pftrace, got ${describe(path)}`);
  }
  const o = checkCallOptions(options, 'stream()', ['rotateBytes', 'keep']);
  const rotate = o?.rotateBytes;
  const keep = o?.keep;
  for (const [name, v] of [['rotateBytes', rotate], ['keep', keep]] as const) {
    if (v !== undefined && typeof v !== 'number') {
      throw new TypeError(`hotspan: stream() option ${name} must be a number, got ${describe(v)}`);
    }
  }
  if (rotate !== undefined && !(Number.isSafeInteger(rotate) && rotate >= MIN_ROTATE)) {
    throw new RangeError(`hotspan: stream() option rotateBytes must be an integer >= ${String(MIN_ROTATE)}, got ${describe(rotate)}`);
  }
  if (keep !== undefined) {
    if (!(Number.isInteger(keep) && keep >= 1 && keep <= 0xffffffff)) {
      throw new RangeError(`hotspan: stream() option keep must be an integer >= 1, got ${describe(keep)}`);
    }
    if (rotate === undefined) {
      throw new RangeError('hotspan: stream() option keep needs rotateBytes (without rotation there is one file)');
    }
  }
  return { rotate: rotate ?? 0, keep: keep ?? 0 };
}

/**
 * A running stream. Emits 'error' (an Error with code, errno, syscall and
 * path) once when a write fails; the streaming then ends, the records it did
 * not write stay in memory under the budget, and recording goes on. Without
 * an 'error' listener the error becomes a process warning
 * (HOTSPAN_STREAM_FAILED) rather than an uncaught exception. Emits 'close'
 * once its file is finished.
 */
export class TraceStream {
  private readonly cancelExit: () => void;
  // Not an EventEmitter: the public declarations stand without @types/node.
  private readonly errorListeners: Array<(error: Error) => void> = [];
  private readonly closeListeners: Array<() => void> = [];

  /** @hidden Made by the package, not by users. */
  constructor(
    private readonly path: string,
    private readonly native: NativeStream,
    /** Commits this thread's and native threads' queued records. */
    private readonly flush: () => void,
  ) {
    this.cancelExit = atExit(`the stream ${path}`, () => {
      this.finish();
    });
  }

  /** Writes what is committed now, finishes the file (a trace on its own) and stops. Idempotent; emits 'close'. */
  close(): void {
    this.cancelExit();
    const was = this.native.status().closed;
    this.finish();
    if (!was) for (const l of [...this.closeListeners]) l();
  }

  /** Listens for the error that ended the streaming (a failed write). */
  on(event: 'error', listener: (error: Error) => void): this;
  /** Listens for the end of the streaming: its last file is finished. */
  on(event: 'close', listener: () => void): this;
  on(event: 'error' | 'close', listener: ((error: Error) => void) | (() => void)): this {
    if (event === 'error') {
      this.errorListeners.push(listener as (error: Error) => void);
    } else if (event === 'close') {
      this.closeListeners.push(listener as () => void);
    } else {
      throw new RangeError(`hotspan: a stream emits 'error' and 'close', not ${describe(event)}`);
    }
    return this;
  }

  /** Removes a listener added with `on()`. */
  off(event: 'error' | 'close', listener: ((error: Error) => void) | (() => void)): this {
    const list: unknown[] = event === 'error' ? this.errorListeners : this.closeListeners;
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
    return this;
  }

  /** Where the stream is: files, bytes, spans written and missed, and its error if it stopped. */
  status(): StreamStatus {
    return { path: this.path, ...this.native.status() };
  }

  /** @internal called on the JS thread when the stream's thread failed */
  failed(): void {
    const error = this.native.status().error;
    if (error === undefined) return;
    if (this.errorListeners.length > 0) {
      for (const l of [...this.errorListeners]) l(error);
    } else {
      process.emitWarning(`${error.message}; the stream stopped, recording goes on within the memory budget`, {
        type: 'HotspanWarning',
        code: 'HOTSPAN_STREAM_FAILED',
      });
    }
  }

  private finish(): void {
    if (this.native.status().closed) return;
    this.flush();
    this.native.close();
  }
}

/** Starts a stream on a native tracer (`start` calls the binding with the checked arguments). */
export function openStream(
  path: unknown,
  options: StreamOptions | undefined,
  start: (path: string, rotateBytes: number, keep: number, onError: () => void) => NativeStream,
  flush: () => void,
): TraceStream {
  const { rotate, keep } = checkArgs(path, options);
  let stream: TraceStream | undefined;
  flush();
  const native = start(path as string, rotate, keep, () => stream?.failed());
  stream = new TraceStream(path as string, native, flush);
  return stream;
}
