// Trace files: the format a path asks for, and the whole-document write used
// by the backends that format in JS (the native backend formats and writes
// on a worker thread instead, see native/addon/write_file.cc).

import { closeSync, openSync, write, writeFileSync, writeSync } from 'node:fs';
import { extname } from 'node:path';

export type OutputFormat = 'json' | 'perfetto';

/** The format by extension: .json, .pftrace / .perfetto-trace; anything else is a RangeError naming the path. */
export function outputFormat(path: string): OutputFormat {
  const lower = path.toLowerCase();
  if (lower.endsWith('.pftrace') || lower.endsWith('.perfetto-trace')) return 'perfetto';
  if (extname(lower) === '.json') return 'json';
  throw new RangeError(
    `hotspan: cannot tell the output format of ${JSON.stringify(path)} (known extensions: .json, .pftrace, .perfetto-trace)`,
  );
}

/** What a written file holds: its size, and the records and timelines in it. */
export interface WrittenFile {
  bytes: number;
  spans: number;
  timelines: number;
}

/** Writers of a whole document in memory. */
export interface DocumentSource {
  chromeJson(): Uint8Array;
  perfetto(): Uint8Array;
}

/** An fs error thrown again with the path in its text (a failed write() alone names no file). */
function namingPath(e: NodeJS.ErrnoException, path: string): NodeJS.ErrnoException {
  const named = new Error(`hotspan: cannot write ${JSON.stringify(path)}: ${e.message}`) as NodeJS.ErrnoException;
  return Object.assign(named, { code: e.code, errno: e.errno, syscall: e.syscall, path });
}

/** Writes under way: finished synchronously if the process exits first. */
const inFlight = new Map<object, { fd: number; data: Uint8Array }>();

function finishAtExit(): void {
  // process.exit() does not wait for the thread pool: a file would stay cut
  // short. Write each one whole instead, the same bytes at the same offsets as
  // the write under way (which may still be running), so the file ends whole
  // whichever finishes last.
  for (const { fd, data } of inFlight.values()) {
    try {
      for (let off = 0; off < data.length; ) off += writeSync(fd, data, off, data.length - off, off);
    } catch {
      // The async write would have failed the same way.
    }
  }
}

function writeAt(fd: number, data: Uint8Array, off: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    write(fd, data, off, data.length - off, null, (e, n) => {
      if (e) reject(namingPath(e, path));
      else resolve(n);
    });
  });
}

/**
 * writeDocument on this thread, waiting for it (the exit paths). The whole
 * document is in memory: the backends that format in JS build it in one
 * piece (the native backend streams it instead, see writeFileNow).
 */
export function writeDocumentNow(
  source: DocumentSource,
  path: string,
  format: OutputFormat,
  held: Contents | (() => Contents),
): WrittenFile {
  const data = format === 'perfetto' ? source.perfetto() : source.chromeJson();
  const contents = typeof held === 'function' ? held() : held;
  try {
    writeFileSync(path, data);
  } catch (e) {
    throw namingPath(e as NodeJS.ErrnoException, path);
  }
  return { bytes: data.length, spans: contents.spans, timelines: contents.timelines };
}

/** What a document holds: its records and timelines. */
export interface Contents {
  spans: number;
  timelines: number;
}

/** Writes the document `source` makes now, which holds `held` (or what `held()` says once it is made). */
export async function writeDocument(
  source: DocumentSource,
  path: string,
  format: OutputFormat,
  held: Contents | (() => Contents),
): Promise<WrittenFile> {
  const data = format === 'perfetto' ? source.perfetto() : source.chromeJson();
  const { spans, timelines } = typeof held === 'function' ? held() : held;
  // Opened and truncated now, synchronously: nothing truncates the file after
  // an exit-time write (an async open could run on the thread pool after it).
  let fd: number;
  try {
    fd = openSync(path, 'w');
  } catch (e) {
    throw namingPath(e as NodeJS.ErrnoException, path);
  }
  const key = {};
  if (inFlight.size === 0) process.on('exit', finishAtExit);
  inFlight.set(key, { fd, data });
  try {
    for (let off = 0; off < data.length; ) off += await writeAt(fd, data, off, path);
  } finally {
    inFlight.delete(key);
    if (inFlight.size === 0) process.off('exit', finishAtExit);
    closeSync(fd);
  }
  return { bytes: data.length, spans, timelines };
}
