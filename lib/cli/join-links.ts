// The links between the processes of a `hotspan run` trace: each traced
// process appends the ends of its flows to `<pid>.links` in the parts
// directory (lib/auto/auto-spawn.ts: 'out' where it spawned a child, 'in'
// where a child started), and the join turns every flow with both ends in
// joined processes into an arrow the viewers draw:
// - Chrome JSON: per end, a zero-length "X" event on the end's thread (named
//   `spawn <file>` or `started by pid <pid>`, category "process") and a flow
//   event bound to it: "s" at the spawn, "f" (binding point "e") at the
//   child's start, the same id, pid, tid, ts and category, which is how the
//   DevTools trace engine and Perfetto's JSON importer bind a flow to its event.
// - Perfetto: a packet sequence of its own (kLinkSequence), with per end an
//   instant TrackEvent on the end's thread track (the uuid the core's writer
//   gives that thread in that process: perfetto_writer.h) at its
//   CLOCK_MONOTONIC time, with flow_ids (the spawn) or terminating_flow_ids
//   (the child's start).
// A flow with one end only (its other process wrote no part) is left out.
// The Perfetto join also says on that sequence which traced processes wrote
// no part or did not finish theirs (processesPacketPerfetto; Chrome JSON has
// them in its metadata, join-parts.ts).

import { readFileSync } from 'node:fs';
import * as path from 'node:path';

import type { LinkEnd } from '../auto/auto-spawn';
import { PROCESSES_TRACK_NAME } from './perfetto-reader';
import { linksName } from '../auto/auto-spawn';

/** A flow both of whose ends are in the trace. */
export interface Link {
  readonly flow: string;
  readonly from: LinkEnd & { pid: number };
  readonly to: LinkEnd & { pid: number };
}

/** The flows between the processes `pids`, read from their links files in `dir`; malformed lines are skipped. */
export function readLinks(dir: string, pids: readonly number[]): Link[] {
  const outs = new Map<string, LinkEnd & { pid: number }>();
  const ins = new Map<string, LinkEnd & { pid: number }>();
  for (const pid of pids) {
    let text: string;
    try {
      text = readFileSync(path.join(dir, linksName(pid)), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      let e: LinkEnd;
      try {
        e = JSON.parse(line) as LinkEnd;
      } catch {
        continue; // the last line of a killed process may be cut off
      }
      if (typeof e !== 'object' || e === null || typeof e.flow !== 'string' || !/^[0-9a-f]{16}$/.test(e.flow)) continue;
      if (!Number.isSafeInteger(e.tid) || !Number.isFinite(e.ts) || typeof e.mono !== 'string' || !/^\d{1,20}$/.test(e.mono)) continue;
      (e.dir === 'out' ? outs : e.dir === 'in' ? ins : new Map()).set(e.flow, { ...e, name: String(e.name), pid });
    }
  }
  const links: Link[] = [];
  for (const [flow, from] of outs) {
    const to = ins.get(flow);
    if (to !== undefined) links.push({ flow, from, to });
  }
  return links.sort((a, b) => a.from.ts - b.from.ts);
}

/** The Chrome JSON events of `links`, each on a line of its own, joined by ",\n" (no leading comma). */
export function linkEventsJson(links: readonly Link[]): string {
  const ev: string[] = [];
  for (const l of links) {
    const id = `0x${l.flow}`;
    for (const [end, ph] of [
      [l.from, 's'],
      [l.to, 'f'],
    ] as const) {
      const at = { cat: 'process', pid: end.pid, tid: end.tid, ts: end.ts };
      ev.push(JSON.stringify({ name: end.name, ph: 'X', ...at, dur: 0, args: { flow: id } }));
      ev.push(JSON.stringify({ name: 'child process', ph, id, ...at, ...(ph === 'f' ? { bp: 'e' } : {}) }));
    }
  }
  return ev.join(',\n');
}

// ---- Perfetto ----

/** The sequence the links' packets are on (a pid's sequence is its pid, below 2^22). */
const LINK_SEQUENCE = 0x7ffffff0;
const MONOTONIC = 3;
const TYPE_INSTANT = 3;
const SEQ_INCREMENTAL_STATE_CLEARED = 1;
const M64 = (1n << 64n) - 1n;

/** perfetto_uuid_salt(pid) of native/core/write/perfetto_writer.h. */
export function uuidSalt(pid: number): bigint {
  if (pid <= 1) return 0n;
  let z = (BigInt(pid) + 0x9e3779b97f4a7c15n) & M64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
  const high = (z ^ (z >> 31n)) & 0xffffffff00000000n;
  return high !== 0n ? high : 1n << 32n;
}

function varint(v: bigint): number[] {
  const out: number[] = [];
  let x = v;
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return out;
}

const key = (field: number, wire: number): number[] => varint(BigInt((field << 3) | wire));
const uint = (field: number, v: bigint | number): number[] => [...key(field, 0), ...varint(BigInt(v))];
const bytes = (field: number, b: readonly number[]): number[] => [...key(field, 2), ...varint(BigInt(b.length)), ...b];
const text = (field: number, s: string): number[] => bytes(field, [...Buffer.from(s, 'utf8')]);
function fixed64(field: number, v: bigint): number[] {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return [...key(field, 1), ...b];
}

/** The Perfetto packets (Trace.packet, framed) of `links`. */
export function linkPacketsPerfetto(links: readonly Link[]): Buffer {
  const out: number[] = [];
  let first = true;
  for (const l of links) {
    for (const [end, field] of [
      [l.from, 47], // flow_ids
      [l.to, 48], // terminating_flow_ids
    ] as const) {
      const event = [
        ...uint(9, TYPE_INSTANT),
        ...uint(11, BigInt(end.tid) ^ uuidSalt(end.pid)),
        ...text(23, end.name),
        ...fixed64(field, BigInt(`0x${l.flow}`)),
      ];
      const packet = [
        ...uint(8, BigInt(end.mono)),
        ...uint(58, MONOTONIC),
        ...uint(10, LINK_SEQUENCE),
        ...(first ? uint(13, SEQ_INCREMENTAL_STATE_CLEARED) : []),
        ...bytes(11, event),
      ];
      first = false;
      out.push(...bytes(1, packet));
    }
  }
  return Buffer.from(out);
}

/** The uuid of the PROCESSES_TRACK_NAME descriptor: clear of every process's salted uuids (high 32 bits) and timeline ids (small). */
const PROCESSES_TRACK_UUID = 0xfffffff0n;

/**
 * The packet (framed) of a track descriptor PROCESSES_TRACK_NAME whose
 * description lists the traced processes the joined trace lacks; it has no
 * events, so viewers show no track for it (perfetto-reader.ts reads it).
 */
export function processesPacketPerfetto(missing: readonly number[], unfinished: readonly number[]): Buffer {
  const descriptor = [
    ...uint(1, PROCESSES_TRACK_UUID),
    ...text(2, PROCESSES_TRACK_NAME),
    ...text(14, JSON.stringify({ missing, unfinished })),
  ];
  return Buffer.from(bytes(1, [...uint(10, LINK_SEQUENCE), ...bytes(60, descriptor)]));
}
