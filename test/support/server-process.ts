// What the database servers' test helpers (test/support/pg-server.ts,
// test/support/redis-server.ts, test/support/mysql-server.ts) share: a free loopback port, and waiting for
// a server process to say it is ready.
import type { ChildProcess } from 'node:child_process';
import * as net from 'node:net';

/** A port free on 127.0.0.1 now (bound to port 0, then closed): the server may still lose it to another, so callers retry. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Resolves true when the child's output matches `ready`, else (it exited, or
 * `timeoutMs` passed: then it is killed) with its output as the reason.
 */
export function untilReady(child: ChildProcess, ready: RegExp, timeoutMs: number): Promise<true | string> {
  return new Promise((resolve) => {
    let output = '';
    let done = false;
    const finish = (v: true | string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(v);
    };
    const take = (chunk: Buffer): void => {
      output += chunk.toString();
      if (ready.test(output)) finish(true);
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    child.once('error', (e) => finish(`${e.message}\n${output}`));
    child.once('exit', (code, signal) => finish(`exited (${String(code ?? signal)}) before it was ready:\n${output}`));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(`not ready after ${String(timeoutMs)} ms:\n${output}`);
    }, timeoutMs);
  });
}
