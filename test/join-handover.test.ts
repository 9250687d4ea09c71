// A joined js worker's batch between its two shared words (lib/backends/share-transport.ts):
// handed over, its records are reserved in flight or counted lost, never
// both and never neither; a terminated worker's exit counts both words lost
// and gives the reserved room back. (test/faults.test.ts terminates a real
// worker; this pins each step of the accounting on its own.)
import { BroadcastChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ShareHub, type ShareTarget } from '../lib/backends/share-hub';
import { MAX_IN_FLIGHT, SharedState } from '../lib/backends/share-transport';

function words(unshipped: number, reserved = 0): Int32Array {
  const w = new Int32Array(new SharedArrayBuffer(8));
  w[0] = unshipped;
  w[1] = reserved;
  return w;
}

describe('js joining: handOver moves a batch to exactly one place', () => {
  it('with room: from unshipped to reserved, in flight', () => {
    const s = SharedState.create(1n);
    const w = words(5);
    expect(s.handOver(5, w)).toBe('ok');
    expect([...w]).toEqual([0, 5]);
    expect(s.inFlight()).toBe(5);
    expect(s.lost()).toBe(0);
  });

  it('without room: from unshipped to lost, nothing in flight', () => {
    const s = SharedState.create(1n);
    expect(s.handOver(MAX_IN_FLIGHT, words(MAX_IN_FLIGHT))).toBe('ok');
    const w = words(3);
    expect(s.handOver(3, w)).toBe('full');
    expect([...w]).toEqual([0, 0]);
    expect(s.inFlight()).toBe(MAX_IN_FLIGHT);
    expect(s.lost()).toBe(3);
  });

  it('closed: from unshipped to lost', () => {
    const s = SharedState.create(1n);
    s.close();
    const w = words(4);
    expect(s.handOver(4, w)).toBe('closed');
    expect([...w]).toEqual([0, 0]);
    expect(s.inFlight()).toBe(0);
    expect(s.lost()).toBe(4);
  });
});

describe('js joining: a terminated worker', () => {
  it('has both words counted lost at its exit, and its reserved room given back', () => {
    const target: ShareTarget = { addJoinedTimeline: () => 1, merge: () => {}, markExited: () => {} };
    const hub = new ShareHub(target, 1n);
    const tid = 4242;
    const w = words(0);
    // The worker's hello (no records) makes it known to the hub.
    const worker = new BroadcastChannel(hub.token);
    const hello = { t: 'batch', k: 'k1', tid, name: 'w', tl: 2, ack: 0, exit: false, unshipped: w, count: 0, core: new Uint8Array(0) };
    worker.postMessage(hello);
    try {
      hub.drain();
      // Stopped after reserving room for a 7-record batch, 4 more recorded since.
      expect(hub.state.handOver(7, words(7))).toBe('ok');
      w[0] = 4;
      w[1] = 7;
      expect(hub.state.inFlight()).toBe(7);
      hub.threadExited(tid);
      expect(hub.state.lost()).toBe(11);
      expect(hub.state.inFlight()).toBe(0);
      // Once: a second exit report of the thread counts nothing.
      hub.threadExited(tid);
      expect(hub.state.lost()).toBe(11);
    } finally {
      worker.close();
      hub.close();
    }
  });
});
