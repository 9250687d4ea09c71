// Reads the columns layout of native/wasm/snapshot_columns.h (the wasm
// recorder's snapshot, hs_rec_snapshot) into a NativeSnapshot, and writes
// its CPU profiles section (lib/binding/wasm-core.ts writes the rest): the records
// as the addon's snapshot hands them to the facade, with the stored
// contexts that follow the layout on output. Copies out of the module's
// memory, which the next call may reuse.

import type { ColumnsProfile, CounterSeries, NativeSnapshot, StoredContext } from './native-binding';

const HEADER_WORDS = 8;
const FIELDS = 6;
const KINDS = ['js', 'native', 'track', 'groups'] as const;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

export function decodeColumns(bytes: Uint8Array): NativeSnapshot {
  const data = bytes.slice(); // aligned, and ours
  const buf = data.buffer;
  const h = new Uint32Array(buf, 0, HEADER_WORDS);
  const [, n, nNames, nTimelines, nAttrs, nSeries, nSamples] = h;
  let at = 4 * HEADER_WORDS;
  const times = new Float64Array(buf.slice(at, at + 16 * n));
  at += 16 * n;
  const samples = new Float64Array(buf, at, 2 * nSamples);
  at += 16 * nSamples;
  const fields = new Uint32Array(buf.slice(at, at + 4 * FIELDS * n));
  at += 4 * FIELDS * n;
  const tls = new Uint32Array(buf, at, 2 * nTimelines);
  at += 8 * nTimelines;
  const attrIndex = new Uint32Array(buf, at, nAttrs);
  at += 4 * nAttrs;
  const sizes = new Uint32Array(buf, at, 2 * nSeries);
  at += 8 * nSeries;
  const nTexts = nNames + nTimelines + nAttrs + nSeries;
  const ends = new Uint32Array(buf, at, nTexts);
  at += 4 * nTexts;
  let k = 0;
  let from = 0;
  const next = (): string => {
    const end = ends[k++];
    const s = decoder.decode(data.subarray(at + from, at + end));
    from = end;
    return s;
  };
  const names: string[] = [];
  for (let i = 0; i < nNames; i++) names.push(next());
  const timelines: NativeSnapshot['timelines'] = [];
  for (let i = 0; i < nTimelines; i++) {
    const bits = tls[2 * i + 1];
    timelines.push({ id: tls[2 * i], name: next(), kind: KINDS[bits & 0xff] ?? 'native', exited: ((bits >> 9) & 1) === 1 });
  }
  const attrs: Array<[number, string]> = [];
  for (let i = 0; i < nAttrs; i++) attrs.push([attrIndex[i], next()]);
  const counters: CounterSeries[] = [];
  for (let i = 0, s = 0; i < nSeries; i++) {
    const count = sizes[2 * i];
    const t = new Float64Array(count);
    const v = new Float64Array(count);
    for (let j = 0; j < count; j++, s++) {
      t[j] = samples[2 * s];
      v[j] = samples[2 * s + 1];
    }
    counters.push({ name: next(), times: t, values: v, dropped: sizes[2 * i + 1] });
  }
  return { names, timelines, count: n, times, fields, attrs, counters, contexts: readContexts(data, at + from) };
}

/** The contexts after the columns: u32 count, then (u32 index, u32 flags, u64 x3, u32 size) each, then the tracestates. */
function readContexts(data: Uint8Array, at: number): Array<[number, StoredContext]> {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const n = v.getUint32(at, true);
  const ENTRY = 4 + 4 + 24 + 4;
  let text = at + 4 + ENTRY * n;
  const out: Array<[number, StoredContext]> = [];
  for (let i = 0, e = at + 4; i < n; i++, e += ENTRY) {
    const size = v.getUint32(e + 32, true);
    const tracestate = decoder.decode(data.subarray(text, text + size));
    text += size;
    out.push([
      v.getUint32(e, true),
      { flags: v.getUint32(e + 4, true), traceHi: v.getBigUint64(e + 8, true), traceLo: v.getBigUint64(e + 16, true), parentWire: v.getBigUint64(e + 24, true), tracestate },
    ]);
  }
  return out;
}

/** Bytes the CPU profiles take in the columns at most (snapshot_columns.h; UTF-8: at most 3 bytes a UTF-16 unit). */
export function profilesBound(profiles: readonly ColumnsProfile[]): number {
  let n = 0;
  for (const p of profiles) {
    n += 16 + 16 * p.functions.length + 8 * p.nodeFrame.length + 12 * p.sampleNode.length;
    for (let f = 0; f < p.functions.length; f++) n += 3 * (p.functions[f].length + p.urls[f].length);
  }
  return n;
}

/** The CPU profiles as the columns' last section (snapshot_columns.h) into `out`; the bytes written. */
export function putProfiles(out: Uint8Array, profiles: readonly ColumnsProfile[]): number {
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let at = 0;
  const u32 = (x: number): void => {
    v.setUint32(at, x, true);
    at += 4;
  };
  const i32 = (x: number): void => {
    v.setInt32(at, x, true);
    at += 4;
  };
  for (const p of profiles) {
    const frames = p.functions.length;
    const samples = p.sampleNode.length;
    u32(p.timeline);
    u32(frames);
    u32(p.nodeFrame.length);
    u32(samples);
    for (let k = 0; k < 2 * frames; k++) i32(p.lines[k]);
    for (const f of p.nodeFrame) u32(f);
    for (const parent of p.nodeParent) i32(parent);
    for (const node of p.sampleNode) u32(node);
    for (let k = 0; k < samples; k++, at += 8) v.setFloat64(at, p.sampleMs[k], true);
    const ends = at;
    const text = at + 8 * frames;
    let end = 0;
    for (let f = 0; f < frames; f++) {
      end += encoder.encodeInto(p.functions[f], out.subarray(text + end)).written;
      v.setUint32(ends + 8 * f, end, true);
      end += encoder.encodeInto(p.urls[f], out.subarray(text + end)).written;
      v.setUint32(ends + 8 * f + 4, end, true);
    }
    at = text + end;
  }
  return at;
}
