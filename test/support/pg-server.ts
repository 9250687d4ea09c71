// A PostgreSQL server for a test: initdb into a temporary directory, then
// postgres on 127.0.0.1 on a free port (trust authentication, no fsync), and
// stopped with its directory removed by stop(). postgres refuses to run as
// root (as CI and these machines run): then initdb and postgres run as
// `nobody` through setpriv (util-linux; it execs, so the server gets the
// signals stop() sends), the directory given to it. A port taken between
// choosing it and binding it is retried on another.
//
//   const pg = await startPostgres();   // inside a case, or a beforeAll
//   ... new pg.Client({ host: pg.host, port: pg.port, user: pg.user, database: pg.database })
//   await pg.stop();                     // also after a failure (afterAll)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { freePort, untilReady } from './server-process';
import { toolBin } from './tools';

export interface PgServer {
  host: string;
  port: number;
  user: string;
  database: string;
  stop(): Promise<void>;
}

const NOBODY = 65534;

/** Starts a server (the case is skipped, or fails where tools are required, when postgres is missing). */
export async function startPostgres(): Promise<PgServer> {
  const postgres = toolBin('postgres');
  const bin = path.dirname(postgres);
  const asRoot = process.getuid?.() === 0;
  const run = (file: string, args: string[]): [string, string[]] =>
    asRoot ? ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--reset-env', file, ...args]] : [file, args];
  const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-pg-'));
  if (asRoot) chownSync(dir, NOBODY, NOBODY);
  const data = path.join(dir, 'data');
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    const [file, args] = run(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    const init = spawnSync(file, args, { encoding: 'utf8', timeout: 120_000 });
    if (init.status !== 0) throw new Error(`initdb failed (${String(init.status ?? init.signal)}): ${init.stderr}`);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const [pfile, pargs] = run(postgres, ['-D', data, '-h', '127.0.0.1', '-p', String(port), '-k', dir, '-c', 'fsync=off', '-c', 'full_page_writes=off']);
      const child = spawn(pfile, pargs, { stdio: ['ignore', 'pipe', 'pipe'] });
      const ready = await untilReady(child, /database system is ready to accept connections/, 60_000);
      if (ready === true) {
        return { host: '127.0.0.1', port, user: 'postgres', database: 'postgres', stop: () => stopServer(child, cleanup) };
      }
      if (attempt < 5 && /could not bind|Address already in use/i.test(ready)) continue;
      throw new Error(`postgres did not start on 127.0.0.1:${String(port)}: ${ready}`);
    }
  } catch (e) {
    cleanup();
    throw e;
  }
}

/**
 * Ends the server (`signal`: SIGINT is postgres's fast shutdown, SIGTERM
 * mariadbd's; SIGKILL after 20 s) and removes its directory.
 */
export async function stopServer(child: ChildProcess, cleanup: () => void, signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await gone;
    clearTimeout(timer);
  }
  cleanup();
}
