// tracer.profile(): V8's CPU profiler, through node:inspector, on the calling
// thread. Its samples go to the backend when the handle stops, in columns
// (CpuSamples) on V8's profile clock: CLOCK_MONOTONIC us, the clock span
// records are read on, so samples and spans share one axis with no
// conversion (test/cpu-profile.test.ts checks it against hrtime).

import { Session } from 'node:inspector';
import { BroadcastChannel } from 'node:worker_threads';

import type { Backend, CpuSamples } from '../backends/backend';
import { describe } from '../common/errors';

/** Options of `tracer.profile()`. */
export interface ProfileOptions {
  /** The sampling interval in microseconds: an integer from 10 to 1,000,000. Default 1000 (1 ms). */
  intervalUs?: number;
}

/** A running CPU profile: `stop()` ends it and adds its samples to the trace. */
export interface CpuProfileHandle {
  /** Stops the profiler and hands its samples to the tracer. Later calls do nothing. */
  stop(): void;
  /** False once stopped. */
  readonly active: boolean;
}

/**
 * The parts of V8's profile (the inspector's Profiler.Profile) read here,
 * declared so the package's types need no @types/node.
 */
export interface V8Profile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
    children?: number[];
  }>;
  startTime: number;
  samples?: number[];
  timeDeltas?: number[];
}
type V8Node = V8Profile['nodes'][number];

export const DEFAULT_INTERVAL_US = 1000;
const MIN_INTERVAL_US = 10;
const MAX_INTERVAL_US = 1_000_000;

/** The interval of `options`, checked: TypeError or RangeError naming the bad value. */
export function checkProfileOptions(options: unknown): number {
  if (options === undefined) return DEFAULT_INTERVAL_US;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`hotspan: profile() options must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'intervalUs') throw new TypeError(`hotspan: profile() got an unknown option "${key}"`);
  }
  const interval = (options as ProfileOptions).intervalUs;
  if (interval === undefined) return DEFAULT_INTERVAL_US;
  if (typeof interval !== 'number') {
    throw new TypeError(`hotspan: profile() intervalUs must be a number, got ${describe(interval)}`);
  }
  if (!Number.isInteger(interval) || interval < MIN_INTERVAL_US || interval > MAX_INTERVAL_US) {
    throw new RangeError(
      `hotspan: profile() intervalUs must be an integer from ${MIN_INTERVAL_US} to ${MAX_INTERVAL_US}, got ${String(interval)}`,
    );
  }
  return interval;
}

/**
 * V8's profile as columns: distinct frames, the call tree in breadth-first
 * order from the root (a parent before its children), and the samples with
 * their times (us).
 */
export function samplesOf(profile: V8Profile): CpuSamples {
  const byId = new Map<number, V8Node>();
  for (const n of profile.nodes) byId.set(n.id, n);
  const functions: string[] = [];
  const urls: string[] = [];
  const lines: number[] = [];
  const frameIndex = new Map<string, number>();
  const nodeIndex = new Map<number, number>();
  const nodeFrame: number[] = [];
  const nodeParent: number[] = [];
  const queue: Array<[V8Node, number]> = [];
  // The root is the node no other node lists as a child (V8's first node).
  const children = new Set<number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) children.add(c);
  for (const n of profile.nodes) if (!children.has(n.id)) queue.push([n, -1]);
  for (let q = 0; q < queue.length; q++) {
    const [n, parent] = queue[q];
    if (nodeIndex.has(n.id)) continue;
    const f = n.callFrame;
    const key = `${f.functionName}\0${f.url}\0${f.lineNumber}\0${f.columnNumber}`;
    let frame = frameIndex.get(key);
    if (frame === undefined) {
      frame = functions.length;
      frameIndex.set(key, frame);
      functions.push(f.functionName);
      urls.push(f.url);
      lines.push(f.lineNumber, f.columnNumber);
    }
    const index = nodeFrame.length;
    nodeIndex.set(n.id, index);
    nodeFrame.push(frame);
    nodeParent.push(parent);
    for (const c of n.children ?? []) {
      const child = byId.get(c);
      if (child !== undefined) queue.push([child, index]);
    }
  }
  const ids = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const sampleNode: number[] = [];
  const sampleUs: number[] = [];
  let t = profile.startTime;
  for (let i = 0; i < ids.length; i++) {
    t += deltas[i] ?? 0;
    const node = nodeIndex.get(ids[i]);
    if (node === undefined) continue;
    sampleNode.push(node);
    sampleUs.push(t);
  }
  return {
    functions,
    urls,
    lines: Int32Array.from(lines),
    nodeFrame: Uint32Array.from(nodeFrame),
    nodeParent: Int32Array.from(nodeParent),
    sampleNode: Uint32Array.from(sampleNode),
    sampleUs: Float64Array.from(sampleUs),
  };
}

/** One V8 CPU profile of this thread on its own inspector session. */
export class CpuProfileRun implements CpuProfileHandle {
  private session: Session | undefined;

  /**
   * @param deliver takes the samples when the profile stops
   * @param onStop called when V8's profile has stopped, before the delivery
   *   (and if the stop failed)
   */
  constructor(
    intervalUs: number,
    private readonly deliver: (samples: CpuSamples) => void,
    private readonly onStop?: () => void,
  ) {
    const session = new Session();
    session.connect();
    try {
      // A session on its own thread answers synchronously.
      post(session, 'Profiler.enable');
      post(session, 'Profiler.setSamplingInterval', { interval: intervalUs });
      post(session, 'Profiler.start');
    } catch (e) {
      session.disconnect();
      throw e;
    }
    this.session = session;
  }

  get active(): boolean {
    return this.session !== undefined;
  }

  stop(): void {
    const session = this.session;
    if (session === undefined) return;
    this.session = undefined;
    let profile: V8Profile;
    try {
      profile = post<{ profile: V8Profile }>(session, 'Profiler.stop').profile;
    } finally {
      session.disconnect();
      this.onStop?.();
    }
    this.deliver(samplesOf(profile));
  }
}

function post<R = unknown>(session: Session, method: string, params?: object): R {
  let done = false;
  let error: Error | null = null;
  let result: unknown;
  session.post(method, params, (err: Error | null, res?: unknown) => {
    done = true;
    error = err;
    result = res;
  });
  if (!done) throw new Error(`hotspan: the inspector did not answer ${method} synchronously`);
  if (error !== null) throw error;
  return result as R;
}

// tracer.profile() on every worker joined to the tracer: the owner's native
// tracer holds the interval of the owner's running profile
// (Backend.profileInterval, one value seen from every thread joined to it)
// and the owner wakes its joined threads on a BroadcastChannel named by its
// token. Each joined tracer then runs V8's profiler on its own thread, on its
// own node:inspector Session (CpuProfileRun), and hands the samples to the
// shared tracer, on its own thread's track, when the owner's profile stops
// (or it closes, or its thread exits). A joined tracer reads the interval when it joins, when the
// channel wakes it (its event loop turns) and on flush().

/** The channel of the tracer whose token is `token`. */
const channelName = (token: string): string => `hotspan.profile ${token}`;

/** The part of a backend a profile link uses: a native one's. */
type Linked = Required<Pick<Backend, 'profileInterval' | 'share'>>;

/** An unref'd channel: it keeps no thread alive. */
function openChannel(b: Linked): BroadcastChannel {
  const channel = new BroadcastChannel(channelName(b.share()));
  (channel as { unref?: () => void }).unref?.();
  return channel;
}

/** The owner's side: publishes its profile's interval (0: stopped) and wakes its joined threads. */
export class ProfileAnnouncer {
  private channel: BroadcastChannel | undefined;

  constructor(private readonly b: Linked) {}

  announce(intervalUs: number): void {
    this.b.profileInterval(intervalUs);
    this.channel ??= openChannel(this.b);
    this.channel.postMessage(intervalUs);
  }

  close(): void {
    this.channel?.close();
    this.channel = undefined;
  }
}

/** A joined thread's side: runs this thread's profile while the owner's runs. */
export class ProfileFollower {
  private channel: BroadcastChannel | undefined;
  private run: CpuProfileRun | undefined;
  private intervalUs = 0;
  /** At the thread's exit (without close()): the running profile's samples go in, not lost. */
  private readonly atExit = (): void => {
    this.close();
  };

  /**
   * @param busy true while the thread's own tracer.profile() runs: the owner's
   *   is then not started (its samples would be taken twice)
   * @param deliver hands a stopped profile's samples to the shared tracer
   */
  constructor(
    private readonly b: Linked,
    private readonly busy: () => boolean,
    private readonly deliver: (samples: CpuSamples) => void,
  ) {
    this.channel = openChannel(b);
    this.channel.onmessage = () => {
      try {
        this.sync();
      } catch (e) {
        // A wake-up from another thread has no caller to throw to.
        process.emitWarning(`hotspan: a joined tracer could not follow its owner's CPU profile: ${(e as Error).message}`, { type: 'HotspanWarning', code: 'HOTSPAN_PROFILE_FOLLOW' });
      }
    };
    process.once('exit', this.atExit);
    this.sync();
  }

  /** True while this thread profiles for the owner. */
  get active(): boolean {
    return this.run?.active === true;
  }

  /** Starts, restarts or stops this thread's profile to match the owner's interval. */
  sync(): void {
    if (this.channel === undefined) return;
    const want = this.b.profileInterval();
    if (this.active && this.intervalUs === want) return;
    this.stopRun();
    if (want > 0 && !this.busy()) {
      this.run = new CpuProfileRun(want, this.deliver);
      this.intervalUs = want;
    }
  }

  /** Stops following: a running profile stops and its samples are delivered. */
  close(): void {
    process.off('exit', this.atExit);
    this.channel?.close();
    this.channel = undefined;
    this.stopRun();
  }

  private stopRun(): void {
    const run = this.run;
    this.run = undefined;
    run?.stop();
  }
}
