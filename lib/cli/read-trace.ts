// Reads a trace file of either format in fixed-size chunks (bounded memory
// for any file size), telling the format by its first bytes, not its name.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

import { ChromeJsonDecoder } from './chrome-reader';
import { PerfettoDecoder } from './perfetto-reader';
import { ProtoError } from './proto';
import { TraceFileError, type ReadSummary, type RecordingCounts, type TraceClocks, type TraceSink } from './trace-model';

export interface ReadOptions {
  /** Called after each chunk with bytes read so far and the file size. */
  onProgress?: (done: number, total: number) => void;
  /** Bytes per read (default 1 MiB). */
  chunkBytes?: number;
}

/** A whole JSON document on one line is parsed whole, up to this size. */
const WHOLE_JSON_LIMIT = 512 * 1024 * 1024;
/** Text after a line-per-event JSON's events (its metadata) read at most. */
const TRAILER_LIMIT = 64 * 1024 * 1024;
/** A Perfetto packet longer than this is taken as a sign the file is not a trace. */
const PACKET_LIMIT = 256 * 1024 * 1024;

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** '{' or '[' then '"', '{', '[' or the matching close, after a BOM and white space. */
function looksLikeJson(b: Uint8Array): boolean {
  let i = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  while (i < b.length && isSpace(b[i])) i++;
  const open = b[i++];
  if (open !== 0x7b && open !== 0x5b) return false;
  while (i < b.length && isSpace(b[i])) i++;
  if (i >= b.length) return true;
  return b[i] === 0x22 || b[i] === 0x7b || b[i] === 0x5b || b[i] === open + 2;
}

class Chunks {
  readonly fd: number;
  readonly size: number;
  done = 0;

  constructor(
    readonly path: string,
    private readonly opts: ReadOptions,
  ) {
    try {
      this.fd = openSync(path, 'r');
    } catch (e) {
      throw new TraceFileError(path, `cannot open: ${(e as Error).message}`);
    }
    const st = fstatSync(this.fd);
    if (st.isDirectory()) {
      closeSync(this.fd);
      throw new TraceFileError(path, 'is a directory, not a trace file');
    }
    this.size = st.size;
  }

  /** Fills buf[at..] with up to `n` bytes; 0 at the end of the file. */
  read(buf: Uint8Array, at: number, n: number): number {
    let got: number;
    try {
      got = readSync(this.fd, buf, at, n, null);
    } catch (e) {
      throw new TraceFileError(this.path, `cannot read: ${(e as Error).message}`);
    }
    this.done += got;
    this.opts.onProgress?.(this.done, this.size);
    return got;
  }

  close(): void {
    closeSync(this.fd);
  }
}

export function readTrace(path: string, sink: TraceSink, opts: ReadOptions = {}): ReadSummary {
  const chunk = opts.chunkBytes ?? 1024 * 1024;
  const file = new Chunks(path, opts);
  try {
    let buf = new Uint8Array(Math.max(chunk, 64));
    let len = file.read(buf, 0, buf.length);
    if (len === 0) throw new TraceFileError(path, 'empty file, not a trace');
    if (looksLikeJson(buf.subarray(0, len))) return readJson(file, sink, buf.subarray(0, len), chunk);
    if (buf[0] !== 0x0a) {
      const head = [...buf.subarray(0, Math.min(len, 4))].map((b) => b.toString(16).padStart(2, '0')).join(' ');
      throw new TraceFileError(path, `not a trace: neither Chrome JSON nor Perfetto protobuf (starts with bytes ${head})`);
    }
    const dec = new PerfettoDecoder(sink);
    let pos = 0;
    let truncated = false;
    let offset = 0; // file offset of buf[0]
    let wholeEnd = 0; // file offset after the last whole packet
    for (;;) {
      // One packet: tag 0x0a, varint length, body.
      let p = pos;
      let need = 0;
      let length = 0;
      if (p >= len) {
        need = 1;
      } else {
        if (buf[p] !== 0x0a) {
          throw new TraceFileError(path, `not a Perfetto trace: unexpected field tag 0x${buf[p].toString(16)} at byte ${String(offset + p)}`);
        }
        p++;
        let shift = 1;
        let complete = false;
        while (p < len) {
          const b = buf[p++];
          length += (b & 0x7f) * shift;
          shift *= 128;
          if (b < 0x80) {
            complete = true;
            break;
          }
          if (shift > 2 ** 35) throw new TraceFileError(path, `not a Perfetto trace: bad packet length at byte ${String(offset + pos)}`);
        }
        if (!complete) need = 1;
        else if (length > PACKET_LIMIT) {
          throw new TraceFileError(path, `not a Perfetto trace: a ${String(length)}-byte packet at byte ${String(offset + pos)}`);
        } else if (p + length > len) need = p + length - len;
      }
      if (need > 0) {
        // Keep the partial packet, read more behind it.
        const rest = len - pos;
        if (pos > 0) {
          buf.copyWithin(0, pos, len);
          offset += pos;
          pos = 0;
          len = rest;
        }
        const want = Math.max(chunk, rest + need);
        if (want > buf.length) {
          const bigger = new Uint8Array(want);
          bigger.set(buf.subarray(0, len));
          buf = bigger;
        }
        const got = file.read(buf, len, buf.length - len);
        if (got === 0) {
          truncated = rest > 0;
          break;
        }
        len += got;
        continue;
      }
      try {
        dec.packet(buf, p, p + length);
      } catch (e) {
        if (!(e instanceof ProtoError)) throw e;
        throw new TraceFileError(path, `malformed packet at byte ${String(offset + pos)}: ${e.message}`);
      }
      pos = p + length;
      wholeEnd = offset + pos;
    }
    if (dec.packets === 0) {
      throw new TraceFileError(path, `truncated at byte ${String(file.size)}, before its first whole Perfetto packet`);
    }
    return {
      format: 'perfetto',
      bytes: file.size,
      truncated,
      lastWhole: { unit: 'byte', at: wholeEnd },
      unclosed: dec.unclosed(),
      skipped: dec.skipped,
      malformed: 0,
      ...withCounts(dec.counts),
      ...(dec.processes === undefined ? {} : { processes: dec.processes }),
    };
  } finally {
    file.close();
  }
}

function withCounts(counts: RecordingCounts | undefined): Pick<ReadSummary, 'counts' | 'dropped' | 'overwritten'> {
  return { counts, dropped: counts?.dropped, overwritten: counts?.overwritten };
}

/**
 * JSON.parse failed because `text` stops early (a prefix of a document cut
 * off), not on a wrong character: V8 says "end of JSON input", or names the
 * text's end as the position.
 */
function endsEarly(e: unknown, text: string): boolean {
  const message = (e as Error).message;
  if (/end of JSON input/i.test(message)) return true;
  const m = /at position (\d+)/.exec(message);
  return m !== null && Number(m[1]) >= text.length;
}

/** How much of a JSON file's end is searched for hotspan's clock metadata. */
const TAIL_BYTES = 64 * 1024;

/**
 * hotspan's clock metadata ("hotspan_clock" in the closing "metadata",
 * chrome_json_writer.cc), read from the file's end before its events, so a
 * converter has it before it writes anything.
 */
function jsonClocks(file: Chunks): TraceClocks | undefined {
  const n = Math.min(file.size, TAIL_BYTES);
  const buf = new Uint8Array(n);
  const got = readSync(file.fd, buf, 0, n, file.size - n);
  const text = new TextDecoder('utf-8').decode(buf.subarray(0, got));
  const m = /"hotspan_clock":\{[^{}]*"origin_monotonic_ns":"(-?\d+)","origin_unix_ns":"(-?\d+)"\}/.exec(text);
  if (m === null) return undefined;
  const origin = BigInt(m[1]);
  // The metadata relates the origin to the epoch: readings taken at it.
  return { originNs: origin, monotonicNs: origin, realtimeNs: BigInt(m[2]), boottimeNs: -1n };
}

function readJson(file: Chunks, sink: TraceSink, head: Uint8Array, chunk: number): ReadSummary {
  const path = file.path;
  const dec = new ChromeJsonDecoder(sink);
  const clocks = jsonClocks(file);
  if (clocks !== undefined) sink.clocks?.(clocks);
  const text = new TextDecoder('utf-8');
  let carry = '';
  let lineNo = 0;
  let state = 'start' as 'start' | 'events' | 'done';
  let lastBad: { line: number; text: string } | undefined;
  let lastGood = 0; // line of the last whole event
  let whole: string | undefined;
  // The document's rest after the event array's ']' (metadata), from this line.
  let trailer: string | undefined;
  let trailerLine = 0;
  // {"traceEvents":[ ... ]...}: the document ends with the object's '}'.
  let objectForm = false;

  const line = (raw: string): void => {
    lineNo++;
    let s = raw.trim();
    if (s === '') return;
    if (lastBad !== undefined) {
      throw new TraceFileError(path, `malformed event at line ${String(lastBad.line)}: ${lastBad.text.slice(0, 80)}`);
    }
    if (state === 'start') {
      if (s === '[' || /^\{\s*"traceEvents"\s*:\s*\[$/.test(s)) {
        state = 'events';
        objectForm = s !== '[';
        return;
      }
      whole = s; // not one event per line: the document is parsed whole below
      state = 'done';
      return;
    }
    if (state === 'done') {
      if (whole !== undefined) whole += '\n' + s;
      else if (trailer !== undefined) trailer += '\n' + s;
      return;
    }
    if (s.startsWith(']')) {
      state = 'done';
      trailer = s.slice(1);
      trailerLine = lineNo;
      return;
    }
    if (s.endsWith(',')) s = s.slice(0, -1);
    try {
      dec.event(JSON.parse(s) as Parameters<ChromeJsonDecoder['event']>[0]);
      lastGood = lineNo;
    } catch (e) {
      if (e instanceof TraceFileError) throw e;
      lastBad = { line: lineNo, text: s }; // fine if it is the file's cut-off last line
    }
  };

  const feed = (bytes: Uint8Array, final: boolean): void => {
    const s = carry + text.decode(bytes, { stream: !final });
    let from = 0;
    for (;;) {
      const nl = s.indexOf('\n', from);
      if (nl < 0) break;
      line(s.slice(from, nl));
      if (whole !== undefined && whole.length > WHOLE_JSON_LIMIT) {
        throw new TraceFileError(path, 'a JSON trace that is not one event per line, too large to read whole');
      }
      if (trailer !== undefined && trailer.length > TRAILER_LIMIT) {
        throw new TraceFileError(path, `malformed end of document at line ${String(trailerLine)}: more than ${String(TRAILER_LIMIT)} characters after the events`);
      }
      from = nl + 1;
    }
    carry = s.slice(from);
    if (final && carry !== '') {
      line(carry);
      carry = '';
    }
  };

  feed(head, false);
  const buf = new Uint8Array(chunk);
  for (;;) {
    const got = file.read(buf, 0, buf.length);
    if (got === 0) break;
    feed(buf.subarray(0, got), false);
  }
  feed(new Uint8Array(0), true);

  let truncated = lastBad !== undefined || state === 'events';
  const rest = trailer?.trim() ?? '';
  if (rest.startsWith(',')) {
    const text = `{${rest.slice(1)}`;
    try {
      dec.trailer = JSON.parse(text) as Record<string, unknown>;
    } catch (e) {
      if (!endsEarly(e, text)) throw new TraceFileError(path, `malformed end of document at line ${String(trailerLine)}: ${(e as Error).message}`);
      // Cut off inside the closing metadata: every event was read, the metadata is lost.
      truncated = true;
    }
  } else if (trailer !== undefined && objectForm && rest === '') {
    truncated = true; // cut right after the events: the object is not closed
  } else if (rest !== '' && rest !== (objectForm ? '}' : '')) {
    throw new TraceFileError(path, `malformed end of document at line ${String(trailerLine)}: ${rest.slice(0, 80)}`);
  }
  if (whole !== undefined) {
    let doc: unknown;
    try {
      doc = JSON.parse(whole);
    } catch (e) {
      const message = (e as Error).message;
      if (endsEarly(e, whole)) {
        throw new TraceFileError(
          path,
          `truncated: the JSON document ends at byte ${String(file.size)} before it is complete; a cut-off trace is only readable when written one event per line (as hotspan writes it)`,
        );
      }
      throw new TraceFileError(path, `not a trace: invalid JSON (${message})`);
    }
    const events = Array.isArray(doc) ? doc : (doc as { traceEvents?: unknown }).traceEvents;
    if (!Array.isArray(events)) throw new TraceFileError(path, 'not a trace: JSON without a traceEvents array');
    if (!Array.isArray(doc)) {
      const { traceEvents: _omit, ...rest } = doc as Record<string, unknown>;
      dec.trailer = rest;
    }
    for (const e of events) dec.event(e as Parameters<ChromeJsonDecoder['event']>[0]);
    truncated = false;
    lastGood = lineNo;
  }
  if (state === 'start') throw new TraceFileError(path, 'not a trace: no events');
  return {
    format: 'json',
    bytes: file.size,
    truncated,
    lastWhole: { unit: 'line', at: lastGood },
    unclosed: dec.unclosed(),
    skipped: 0,
    malformed: dec.malformed,
    firstMalformed: dec.firstMalformed,
    ...withCounts(dec.counts()),
    processes: dec.processes(),
  };
}
