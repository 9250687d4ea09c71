// Trace files: the format a path asks for, and the whole-document write used
// by the backends that format in JS (the native backend formats and writes
// on a worker thread instead, see native/addon/write_file.cc).

import { writeFile } from 'node:fs/promises';
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

/** Writers of a whole document in memory. */
export interface DocumentSource {
  chromeJson(): Uint8Array;
  perfetto(): Uint8Array;
}

export function writeDocument(source: DocumentSource, path: string, format: OutputFormat): Promise<void> {
  return writeFile(path, format === 'perfetto' ? source.perfetto() : source.chromeJson());
}
