// hotspan/auto's SpanAdder (lib/auto/auto-file.ts) takes each span of the
// recorder into the native tracer as it ends, so the recorder holds no ended
// span as an object until exit. A span under an ancestor still open waits for
// that ancestor, and goes in under the parent it has in the end; a parent
// that is not in the trace gives way to its own; waiting is bounded, and
// what does not fit is refused (the recorder counts it in `dropped`); a span
// the tracer refuses (the program closed it) is counted in `lost`.
import { describe, expect, it } from 'vitest';

import { SpanAdder } from '../lib/auto/auto-file';
import type { AutoSpan } from '../lib/auto/auto-record';
import { NativeBackend } from '../lib/backends/native-backend';
import { unwrapped } from '../lib/tracer/async-context';
import { internals } from '../lib/tracer/internal';
import { Tracer } from '../lib/tracer/tracer';

function setup(maxWaiting?: number): { t: Tracer; adder: SpanAdder } {
  const t = new Tracer({ backend: 'native' });
  const b = unwrapped(t[internals]().backend);
  if (!(b instanceof NativeBackend)) throw new Error('not the native backend');
  return { t, adder: new SpanAdder(b, 0, maxWaiting) };
}

let clock = 0;
function span(name: string, parent?: AutoSpan): AutoSpan {
  clock += 1;
  return { track: 'redis', name, start: clock, end: NaN, attrs: { k: name }, error: false, parent };
}
const end = (s: AutoSpan): AutoSpan => {
  clock += 1;
  s.end = clock;
  return s;
};

/** The tracer's spans: name -> parent's name ('' for none). */
function tree(t: Tracer): Record<string, string> {
  t.flush();
  const spans = t.snapshot();
  const byId = new Map(spans.map((s) => [s.id, s.name]));
  return Object.fromEntries(spans.map((s) => [s.name, byId.get(s.parent) ?? '']));
}

describe('SpanAdder', () => {
  it('adds a span as it ends; a child waits for its open parent and goes in under it', () => {
    const { t, adder } = setup();
    const root = span('root');
    const child = span('child', root);
    const lone = span('lone');
    expect(adder.take(end(lone))).toBe(true);
    expect(tree(t)).toEqual({ lone: '' });
    expect(adder.take(end(child))).toBe(true);
    expect(tree(t)).toEqual({ lone: '' });
    expect(adder.take(end(root))).toBe(true);
    expect(tree(t)).toEqual({ lone: '', root: '', child: 'root' });
    t.close();
  });

  it('a span under a parent not in the trace goes in under that parent\'s parent once both ended', () => {
    const { t, adder } = setup();
    const root = span('root');
    const conn = span('conn', root); // untraced: it ends without being taken
    const dns = span('dns', conn);
    adder.take(end(dns));
    end(conn);
    adder.passed(conn);
    expect(tree(t)).toEqual({});
    adder.take(end(root));
    expect(tree(t)).toEqual({ root: '', dns: 'root' });
    t.close();
  });

  it('a grandchild waits through each open ancestor; add() puts in what still waits, without its open parent', () => {
    const { t, adder } = setup();
    const root = span('root');
    const mid = span('mid', root);
    const leaf = span('leaf', mid);
    adder.take(end(leaf));
    adder.take(end(mid));
    expect(tree(t)).toEqual({});
    adder.add();
    expect(tree(t)).toEqual({ mid: '', leaf: 'mid' });
    t.close();
  });

  it('refuses a span past its waiting bound, and adds the others', () => {
    const { t, adder } = setup(2);
    const root = span('root');
    const taken = ['a', 'b', 'c'].map((n) => adder.take(end(span(n, root))));
    expect(taken).toEqual([true, true, false]);
    expect(adder.take(end(root))).toBe(true);
    expect(tree(t)).toEqual({ root: '', a: 'root', b: 'root' });
    t.close();
  });

  it('never throws into the program when the program closed the tracer: the span is counted as lost', () => {
    const { t, adder } = setup();
    t.close();
    const root = span('root');
    expect(adder.take(end(span('child', root)))).toBe(true);
    expect(() => adder.take(end(root))).not.toThrow();
    expect(() => adder.take(end(span('lone')))).not.toThrow();
    expect(adder.lost).toBe(3);
  });
});
