// tracer.profile() on every worker joined to the tracer: the owner's native
// tracer holds the interval of the owner's running profile
// (Backend.profileInterval, one value seen from every thread joined to it)
// and the owner wakes its joined threads on a BroadcastChannel named by its
// token. Each joined tracer then runs V8's profiler on its own thread, on its
// own node:inspector Session (CpuProfileRun), and hands the samples to the
// shared tracer, on its own thread's track, when the owner's profile stops
// (or it closes, or its thread exits). A joined tracer reads the interval when it joins, when the
// channel wakes it (its event loop turns) and on flush().

import { BroadcastChannel } from 'node:worker_threads';

import type { Backend, CpuSamples } from '../backends/backend';
import { CpuProfileRun } from './cpu-profile';

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
