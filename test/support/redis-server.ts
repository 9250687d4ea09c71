// A Redis server for a test: redis-server on 127.0.0.1 on a free port, no
// persistence, its working directory temporary, stopped and removed by
// stop(). A port taken between choosing it and binding it is retried.
//
//   const redis = await startRedis();   // inside a case, or a beforeAll
//   ... new Redis(redis.port, redis.host)
//   await redis.stop();                  // also after a failure (afterAll)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { stopServer } from './pg-server';
import { freePort, untilReady } from './server-process';
import { toolBin } from './tools';

export interface RedisServer {
  host: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts a server (the case is skipped, or fails where tools are required, when redis-server is missing). */
export async function startRedis(): Promise<RedisServer> {
  const bin = toolBin('redis-server');
  const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-redis-'));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no'];
      const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const ready = await untilReady(child, /Ready to accept connections/, 60_000);
      if (ready === true) return { host: '127.0.0.1', port, stop: () => stopServer(child, cleanup) };
      if (attempt < 5 && /Address already in use/i.test(ready)) continue;
      throw new Error(`redis-server did not start on 127.0.0.1:${String(port)}: ${ready}`);
    }
  } catch (e) {
    cleanup();
    throw e;
  }
}
