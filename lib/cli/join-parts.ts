// `hotspan run`'s last step: the files its program's traced processes wrote
// into the parts directory (lib/auto/auto-out.ts: `<pid>.pftrace` or
// `<pid>.json`, and a `<pid>.started` marker each) joined into one trace.
// Each part is a whole document of the core's writers, on the run's one time
// axis, with its own pid and process name (native/core/write/document_info.h:
// the process_name metadata, the process descriptor, copied as they are), so:
// - Perfetto: the parts are concatenated. Each is on its own packet sequence
//   with its own track uuids (perfetto_writer.h), and a Trace is a sequence
//   of packets, so the concatenation is one valid trace.
// - Chrome JSON: the parts' traceEvents are put in one array (their pids
//   differ); the metadata is the first part's, with the counts summed
//   ("hotspan", "hotspan_counters_dropped") and each process's own under
//   "hotspan_processes" ({pid: counts}), and the traced processes that wrote
//   no part under "hotspan_missing_processes", and those whose part is
//   their last periodic flush (no `<pid>.ended`: killed before their write
//   at exit) under "hotspan_unfinished_processes".
// - Perfetto: those two lists in a "hotspan.processes" track descriptor
//   (join-links.ts, processesPacketPerfetto).
// - Both: the flows from each spawn to the child it started, when both
//   processes are in the trace (lib/cli/join-links.ts).
// Parts are copied in blocks: the join never holds a whole part.

import { closeSync, openSync, readdirSync, readSync, statSync, writeSync } from 'node:fs';
import * as path from 'node:path';

import type { OutputFormat } from '../common/output';
import { linkEventsJson, linkPacketsPerfetto, processesPacketPerfetto, readLinks } from './join-links';

const BLOCK = 1 << 20;
const JSON_HEAD = '{"traceEvents":[\n';
const JSON_TAIL = '\n],"displayTimeUnit"';
/** How much of a JSON part's end holds its metadata (as read-trace.ts's TAIL_BYTES). */
const TAIL_BYTES = 64 * 1024;

export interface JoinedParts {
  /** The pids whose parts are in the trace, in its order. */
  readonly pids: number[];
  /** The traced processes that started but wrote no part (killed, or still running). */
  readonly missing: number[];
  /** Traced processes whose part is their last periodic flush: they did not write at exit (killed). */
  readonly unfinished: number[];
  /** Flows drawn from a spawn to the child it started. */
  readonly links: number;
  /** Parts left out: not of the trace's format, or not a whole document (path: why). */
  readonly skipped: string[];
}

/** Copies [from, to) of the open file `src` to the open file `dst`. */
function copyRange(src: number, dst: number, from: number, to: number): void {
  const buf = Buffer.allocUnsafe(BLOCK);
  for (let at = from; at < to; ) {
    const n = readSync(src, buf, 0, Math.min(BLOCK, to - at), at);
    if (n === 0) throw new Error(`hotspan run: a trace part ended early at byte ${String(at)}`);
    writeSync(dst, buf, 0, n);
    at += n;
  }
}

/**
 * The length of a Perfetto part's whole packets (Trace.packet, field 1,
 * length-framed): a part cut off mid-packet (its process killed while it
 * wrote) is joined up to there, so the next part's packets stay framed.
 */
function wholePackets(fd: number, size: number): number {
  const buf = Buffer.allocUnsafe(BLOCK);
  let base = 0; // buf holds the file's bytes [base, base + held)
  let held = 0;
  let at = 0;
  while (at < size) {
    if (at + 11 > base + held && base + held < size) {
      base = at;
      held = readSync(fd, buf, 0, Math.min(BLOCK, size - at), at);
    }
    let i = at - base;
    if (i >= held || buf[i] !== 0x0a) return at;
    let len = 0;
    let scale = 1;
    for (i++; ; i++) {
      if (i >= held || scale > 2 ** 63) return at;
      len += (buf[i] & 0x7f) * scale;
      scale *= 128;
      if ((buf[i] & 0x80) === 0) break;
    }
    const end = base + i + 1 + len;
    if (end > size) return at;
    at = end;
  }
  return at;
}

interface JsonPart {
  /** Byte range of the part's events, without the brackets. */
  from: number;
  to: number;
  metadata: Record<string, unknown>;
}

/** Where a Chrome JSON part's events are, and its metadata; a string says why it is not a whole document. */
function jsonPart(fd: number, size: number): JsonPart | string {
  const head = Buffer.alloc(JSON_HEAD.length);
  readSync(fd, head, 0, head.length, 0);
  if (head.toString('utf8') !== JSON_HEAD) return 'not a hotspan Chrome JSON document';
  const n = Math.min(size, TAIL_BYTES);
  const tail = Buffer.alloc(n);
  readSync(fd, tail, 0, n, size - n);
  const text = tail.toString('latin1');
  const at = text.lastIndexOf(JSON_TAIL);
  if (at < 0) return 'no end (cut off)';
  let parsed: unknown;
  try {
    parsed = JSON.parse(`{${Buffer.from(text.slice(at + 3), 'latin1').toString('utf8')}`);
  } catch {
    return 'no end (cut off)';
  }
  const metadata = (parsed as { metadata?: unknown }).metadata;
  const from = JSON_HEAD.length;
  const to = size - n + at;
  return { from, to, metadata: typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>) : {} };
}

/** `into` plus the numeric members of `add` (an object of counts). */
function addCounts(into: Record<string, number>, add: unknown): void {
  if (typeof add !== 'object' || add === null) return;
  for (const [k, v] of Object.entries(add)) if (typeof v === 'number') into[k] = (into[k] ?? 0) + v;
}

/**
 * Joins the parts in `dir` of `format` into `out` (replacing it), the part of
 * `firstPid` (the program hotspan run started) first, then by pid.
 */
export function joinParts(dir: string, out: string, format: OutputFormat, firstPid: number | undefined): JoinedParts {
  const ext = format === 'json' ? '.json' : '.pftrace';
  const pids: number[] = [];
  const started = new Set<number>();
  const ended = new Set<number>();
  const skipped: string[] = [];
  for (const name of readdirSync(dir)) {
    const m = /^(\d+)(\.[a-z]+)$/.exec(name);
    if (m === null) continue;
    const pid = Number(m[1]);
    if (m[2] === '.started') started.add(pid);
    else if (m[2] === '.ended') ended.add(pid);
    else if (m[2] === '.links') continue;
    else if (m[2] === ext) pids.push(pid);
    else skipped.push(`${path.join(dir, name)}: not ${ext}`);
  }
  pids.sort((a, b) => (a === firstPid ? -1 : b === firstPid ? 1 : a - b));
  const joined: number[] = [];
  const dst = openSync(out, 'w');
  try {
    const counts: Record<string, number> = {};
    const dropped: Record<string, number> = {};
    const perProcess: Record<string, unknown> = {};
    let metadata: Record<string, unknown> | undefined;
    if (format === 'json') writeSync(dst, JSON_HEAD);
    for (const pid of pids) {
      const file = path.join(dir, `${String(pid)}${ext}`);
      const src = openSync(file, 'r');
      try {
        const size = statSync(file).size;
        if (format === 'perfetto') {
          const whole = wholePackets(src, size);
          if (whole < size) skipped.push(`${file}: cut off after byte ${String(whole)} (joined up to there)`);
          copyRange(src, dst, 0, whole);
        } else {
          const part = jsonPart(src, size);
          if (typeof part === 'string') {
            skipped.push(`${file}: ${part}`);
            continue;
          }
          if (joined.length > 0) writeSync(dst, ',\n');
          copyRange(src, dst, part.from, part.to);
          metadata ??= part.metadata;
          addCounts(counts, part.metadata.hotspan);
          addCounts(dropped, part.metadata.hotspan_counters_dropped);
          perProcess[String(pid)] = part.metadata.hotspan ?? {};
        }
        joined.push(pid);
      } finally {
        closeSync(src);
      }
    }
    // Each child linked to the span that started it (lib/cli/join-links.ts).
    const links = readLinks(dir, joined);
    if (links.length > 0) {
      if (format === 'json') writeSync(dst, `${joined.length > 0 ? ',\n' : ''}${linkEventsJson(links)}`);
      else writeSync(dst, linkPacketsPerfetto(links));
    }
    const missing = [...started].filter((p) => !joined.includes(p) && !pids.includes(p)).sort((a, b) => a - b);
    // A part whose process never wrote at exit: its last periodic flush (lib/auto/auto-flush.ts).
    const unfinished = joined.filter((p) => started.has(p) && !ended.has(p)).sort((a, b) => a - b);
    if (format === 'perfetto' && (missing.length > 0 || unfinished.length > 0)) writeSync(dst, processesPacketPerfetto(missing, unfinished));
    if (format === 'json') {
      const meta: Record<string, unknown> = { ...(metadata ?? {}) };
      if (Object.keys(counts).length > 0) meta.hotspan = counts;
      if (Object.keys(dropped).length > 0) meta.hotspan_counters_dropped = dropped;
      meta.hotspan_processes = perProcess;
      if (missing.length > 0) meta.hotspan_missing_processes = missing;
      if (unfinished.length > 0) meta.hotspan_unfinished_processes = unfinished;
      writeSync(dst, `${JSON_TAIL.slice(0, 3)}"displayTimeUnit":"ms","metadata":${JSON.stringify(meta)}}\n`);
    }
    return { pids: joined, missing, unfinished, skipped, links: links.length };
  } finally {
    closeSync(dst);
  }
}
