// The js backend's Chrome Trace Event JSON writer: the document the core's
// writer (native/core/chrome_json_writer.cc) produces, from the same
// columnar snapshot. Object form; ts/dur in us with 3 decimals on the
// performance.now() axis; pid 1, tid = timeline id; thread_name and
// thread_sort_index metadata per timeline; groups as X events (cat "group");
// serial tracks as X events and concurrent tracks as b/e pairs (cat "async",
// id = span id); args = attributes, span_id, parent_id, error, abandoned.

import { FIELDS_PER_RECORD, FLAG_ABANDONED, FLAG_ERROR, spanId } from './flags';
import type { NativeSnapshot } from './native-binding';

/** ns -> "us.nnn", exact to the ns like the core's put_us. */
function us(ns: number): string {
  const neg = ns < 0;
  const u = Math.abs(ns);
  const whole = Math.floor(u / 1000);
  const frac = u - whole * 1000;
  return `${neg ? '-' : ''}${String(whole)}.${String(frac).padStart(3, '0')}`;
}

/** The members of an attribute object's text, without braces; '' for none. */
function members(text: string): string {
  const t = text.trim();
  if (t.length < 2 || t[0] !== '{' || t[t.length - 1] !== '}') {
    return t === '' ? '' : `"attrs":${JSON.stringify(t)}`;
  }
  return t.slice(1, -1).trim();
}

export function chromeJson(snap: NativeSnapshot, serialTracks: ReadonlySet<number>): string {
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
        `{"name":${name},"cat":"${cat}","ph":"X","ts":${us(startNs)},"dur":${us(endNs - startNs)},${where},"args":{${args}}}`,
      );
    } else {
      events.push(
        `{"name":${name},"cat":"async","ph":"b","ts":${us(startNs)},${where},"id":"${String(id)}","args":{${args}}}`,
        `{"name":${name},"cat":"async","ph":"e","ts":${us(endNs)},${where},"id":"${String(id)}"}`,
      );
    }
  }
  return `{"traceEvents":[\n${events.join(',\n')}\n],"displayTimeUnit":"ms"}\n`;
}
