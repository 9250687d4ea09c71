// The js backend's Chrome Trace Event JSON writer: the document the core's
// writer (native/core/chrome_json_writer.cc) produces, from the same
// columnar snapshot. Object form; ts/dur in us with 3 decimals on the
// performance.now() axis; pid 1, tid = timeline id; thread_name and
// thread_sort_index metadata per timeline; groups as X events (cat "group");
// serial tracks as X events and concurrent tracks as b/e pairs (cat "async",
// id = span id); args = attributes, span_id, parent_id, error, abandoned.

import { FIELDS_PER_RECORD, FLAG_ABANDONED, FLAG_ERROR, spanId } from './flags';
import type { ClockReadings } from './clock';
import type { NativeSnapshot } from './native-binding';

/** ns -> "us.nnn", exact to the ns like the core's put_us. */
function us(ns: number): string {
  const neg = ns < 0;
  const u = Math.abs(ns);
  const whole = Math.floor(u / 1000);
  const frac = u - whole * 1000;
  return `${neg ? '-' : ''}${String(whole)}.${String(frac).padStart(3, '0')}`;
}

const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * dur as the core's put_dur writes it: the exact difference of the end's and
 * the start's ts as doubles, so a reader's ts + dur (even after subtracting
 * an earlier ts, as speedscope does) is the end's own ts; where that
 * difference is not exact, the value nearest it at the fewest decimals for
 * which ts + dur still gives the end.
 */
function durText(startNs: number, endNs: number): string {
  const d = endNs - startNs;
  const ts = startNs / 1000;
  const te = endNs / 1000;
  const hi = te - ts;
  const back = hi - te;
  const lo = te - (hi - back) + (-ts - back);
  if (lo === 0) return hi === d / 1000 ? us(d) : fixed(hi);
  const need = Math.ceil((52 - Math.floor(Math.log2(Math.abs(te) + Math.abs(ts)))) * 0.30103);
  for (let q = Math.max(4, need - 1); q <= Math.min(22, need + 2); q++) {
    const scaled = hi * POW10[q] + lo * POW10[q];
    if (!(scaled >= 0 && scaled < 2 ** 53)) break;
    const m = Math.round(scaled);
    if (ts + m / POW10[q] === te) return fixed(m / POW10[q]);
  }
  return us(d);
}

/** A number's shortest round-trip text without an exponent. */
function fixed(v: number): string {
  const s = String(v);
  return s.includes('e') ? v.toFixed(20).replace(/0+$/, '') : s;
}

/** The members of an attribute object's text, without braces; '' for none. */
function members(text: string): string {
  const t = text.trim();
  if (t.length < 2 || t[0] !== '{' || t[t.length - 1] !== '}') {
    return t === '' ? '' : `"attrs":${JSON.stringify(t)}`;
  }
  return t.slice(1, -1).trim();
}

export function chromeJson(
  snap: NativeSnapshot,
  serialTracks: ReadonlySet<number>,
  clocks: ClockReadings,
  originNs: bigint,
): string {
  const events: string[] = [
    '{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"hotspan"}}',
  ];
  const kinds = new Map<number, string>();
  for (const t of snap.timelines) {
    kinds.set(t.id, t.kind);
    events.push(
      `{"name":"thread_name","ph":"M","pid":1,"tid":${String(t.id)},"args":{"name":${JSON.stringify(t.name)}}}`,
      `{"name":"thread_sort_index","ph":"M","pid":1,"tid":${String(t.id)},"args":{"sort_index":${String(t.id)}}}`,
    );
  }
  const names = snap.names.map((n) => JSON.stringify(n));
  const attrs = new Map<number, string>();
  for (const [i, text] of snap.attrs) attrs.set(i, text);
  const { times, fields } = snap;
  for (let i = 0; i < snap.count; i++) {
    const f = i * FIELDS_PER_RECORD;
    const tl = fields[f + 1];
    const kind = kinds.get(tl);
    const track = kind === 'track';
    const complete = !track || serialTracks.has(tl);
    const cat = kind === 'groups' ? 'group' : track ? 'async' : 'span';
    const name = names[fields[f]] ?? '"?"';
    const id = spanId(tl, fields[f + 2]);
    const parent = fields[f + 4] === 0 ? 0 : spanId(fields[f + 3], fields[f + 4]);
    const flags = fields[f + 5] & 0xffff;
    const startNs = Math.round(times[2 * i] * 1e6);
    const endNs = Math.round(times[2 * i + 1] * 1e6);
    const text = attrs.get(i);
    const m = text === undefined ? '' : members(text);
    let args = m === '' ? '' : `${m},`;
    args += `"span_id":${String(id)},"parent_id":${String(parent)}`;
    if (flags & FLAG_ERROR) args += ',"error":true';
    if (flags & FLAG_ABANDONED) args += ',"abandoned":true';
    const where = `"pid":1,"tid":${String(tl)}`;
    if (complete) {
      events.push(
        `{"name":${name},"cat":"${cat}","ph":"X","ts":${us(startNs)},"dur":${durText(startNs, endNs)},${where},"args":{${args}}}`,
      );
    } else {
      events.push(
        `{"name":${name},"cat":"async","ph":"b","ts":${us(startNs)},${where},"id":"${String(id)}","args":{${args}}}`,
        `{"name":${name},"cat":"async","ph":"e","ts":${us(endNs)},${where},"id":"${String(id)}"}`,
      );
    }
  }
  const unixNs = clocks.realtimeNs - (clocks.monotonicNs - originNs);
  const meta = `"metadata":{"hotspan_clock":{"ts_axis":"performance.now() in us","origin_monotonic_ns":"${String(originNs)}","origin_unix_ns":"${String(unixNs)}"}}`;
  return `{"traceEvents":[\n${events.join(',\n')}\n],"displayTimeUnit":"ms",${meta}}\n`;
}
