// Trace files: the format a path asks for, and the whole-document write used
// by the backends that format in JS (the native backend formats and writes
// on a worker thread instead, see native/addon/write_file.cc).

import { writeFileSync } from 'node:fs';
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

/** Writes under way: finished synchronously if the process exits first. */
const inFlight = new Map<object, { path: string; data: string | Uint8Array }>();

function finishAtExit(): void {
  // process.exit() does not wait for fs promises: a file already opened
  // (truncated) would stay cut short. Write each one whole instead.
  for (const { path, data } of inFlight.values()) {
    try {
      writeFileSync(path, data);
    } catch {
      // The async write would have failed the same way.
    }
  }
}

export async function writeDocument(source: DocumentSource, path: string, format: OutputFormat): Promise<void> {
  const data = format === 'perfetto' ? source.perfetto() : source.chromeJson();
  const key = {};
  if (inFlight.size === 0) process.on('exit', finishAtExit);
  inFlight.set(key, { path, data });
  try {
    await writeFile(path, data);
  } finally {
    inFlight.delete(key);
    if (inFlight.size === 0) process.off('exit', finishAtExit);
  }
}
