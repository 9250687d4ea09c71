// hotspan/otel's context manager: bind() of functions and of EventEmitters
// (instrumentations bind a request's emitter so its listeners run in the
// request's context, wherever the event is emitted from).
import { EventEmitter } from 'node:events';

import { createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';

import { AsyncLocalStorageContextManager } from '../lib/otel/context-manager';

const KEY = createContextKey('hotspan test');
const inCtx = (v: string) => ROOT_CONTEXT.setValue(KEY, v);

describe('AsyncLocalStorageContextManager.bind', () => {
  it('runs a bound function in its context, with its this and arguments', () => {
    const cm = new AsyncLocalStorageContextManager();
    const f = cm.bind(inCtx('a'), function (this: { k: number }, x: number) {
      return [cm.active().getValue(KEY), this.k, x];
    });
    expect(f.call({ k: 7 }, 3)).toEqual(['a', 7, 3]);
    expect(cm.active().getValue(KEY)).toBeUndefined();
  });

  it('runs listeners added after bind in the bound context, and not those added before', () => {
    const cm = new AsyncLocalStorageContextManager();
    const ee = new EventEmitter();
    const seen: unknown[] = [];
    ee.on('e', () => seen.push(['before', cm.active().getValue(KEY)]));
    expect(cm.bind(inCtx('req'), ee)).toBe(ee);
    ee.on('e', () => seen.push(['on', cm.active().getValue(KEY)]));
    ee.prependListener('e', () => seen.push(['prepend', cm.active().getValue(KEY)]));
    ee.once('e', () => seen.push(['once', cm.active().getValue(KEY)]));
    cm.with(inCtx('other'), () => ee.emit('e'));
    ee.emit('e');
    expect(seen).toEqual([
      ['prepend', 'req'],
      ['before', 'other'],
      ['on', 'req'],
      ['once', 'req'],
      ['prepend', 'req'],
      ['before', undefined],
      ['on', 'req'],
    ]);
  });

  it('removes a bound listener by the original function, once per addition', () => {
    const cm = new AsyncLocalStorageContextManager();
    const ee = new EventEmitter();
    cm.bind(inCtx('x'), ee);
    let n = 0;
    const l = (): void => {
      n++;
    };
    ee.on('e', l);
    ee.addListener('e', l);
    ee.once('o', l);
    expect(ee.listenerCount('e')).toBe(2);
    ee.removeListener('e', l);
    expect(ee.listenerCount('e')).toBe(1);
    ee.off('e', l);
    expect(ee.listenerCount('e')).toBe(0);
    ee.off('o', l);
    expect(ee.listenerCount('o')).toBe(0);
    ee.emit('e');
    ee.emit('o');
    expect(n).toBe(0);
  });

  it('keeps the first binding of an emitter, and returns other values as they are', () => {
    const cm = new AsyncLocalStorageContextManager();
    const ee = new EventEmitter();
    cm.bind(inCtx('first'), ee);
    cm.bind(inCtx('second'), ee);
    let got: unknown;
    ee.on('e', () => (got = cm.active().getValue(KEY)));
    ee.emit('e');
    expect(got).toBe('first');
    const plain = { on: 1 };
    expect(cm.bind(inCtx('z'), plain)).toBe(plain);
    expect(cm.bind(inCtx('z'), 5)).toBe(5);
  });
});
