// A MariaDB server for a test: mariadb-install-db into a temporary directory,
// then mariadbd on 127.0.0.1 on a free port, its unix socket in that
// directory, reading no configuration file (--no-defaults: nothing of
// /etc/mysql), and stopped with its directory removed by stop(). At startup
// it runs an init file that creates a database and a user with a password
// for the test (DATABASE, USER, PASSWORD below), so the client authenticates
// as a service would. mariadbd refuses to run as root (as CI and these
// machines run): then both run as `nobody` through setpriv (util-linux; it
// execs, so the server gets the signal stop() sends), the directory given to
// it. A port taken between choosing it and binding it is retried on another.
//
//   const db = await startMysql();      // inside a case, or a beforeAll
//   ... mysql.createConnection({ host: db.host, port: db.port, user: db.user, password: db.password, database: db.database })
//   await db.stop();                     // also after a failure (afterAll)
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { stopServer } from './pg-server';
import { freePort, untilReady } from './server-process';
import { toolBin } from './tools';

export interface MysqlServer {
  host: string;
  port: number;
  /** The server's unix socket. */
  socketPath: string;
  user: string;
  password: string;
  database: string;
  stop(): Promise<void>;
}

const NOBODY = 65534;
const DATABASE = 'hotspan';
const USER = 'hotspan';
const PASSWORD = 'hotspan-test';

/** mariadb-install-db: beside mariadbd, in the bin folder next to its sbin (Debian), or on PATH. */
function installDb(mariadbd: string): string {
  const dir = path.dirname(mariadbd);
  for (const file of [path.join(dir, 'mariadb-install-db'), path.join(dir, '..', 'bin', 'mariadb-install-db')]) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // Not there: the next place.
    }
  }
  return 'mariadb-install-db';
}

/** Starts a server (the case is skipped, or fails where tools are required, when mariadbd is missing). */
export async function startMysql(): Promise<MysqlServer> {
  const mariadbd = toolBin('mariadbd');
  const asRoot = process.getuid?.() === 0;
  const run = (file: string, args: string[]): [string, string[]] =>
    asRoot ? ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--reset-env', file, ...args]] : [file, args];
  const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-mysql-'));
  if (asRoot) chownSync(dir, NOBODY, NOBODY);
  const data = path.join(dir, 'data');
  const socketPath = path.join(dir, 'mysqld.sock');
  const init = path.join(dir, 'init.sql');
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    const [file, args] = run(installDb(mariadbd), ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--skip-name-resolve']);
    const setup = spawnSync(file, args, { encoding: 'utf8', timeout: 120_000 });
    if (setup.status !== 0) throw new Error(`mariadb-install-db failed (${String(setup.status ?? setup.signal)}): ${setup.stderr}`);
    writeFileSync(
      init,
      `CREATE DATABASE IF NOT EXISTS ${DATABASE};\n` +
        `CREATE USER IF NOT EXISTS '${USER}'@'127.0.0.1' IDENTIFIED BY '${PASSWORD}';\n` +
        `CREATE USER IF NOT EXISTS '${USER}'@'localhost' IDENTIFIED BY '${PASSWORD}';\n` +
        `GRANT ALL ON ${DATABASE}.* TO '${USER}'@'127.0.0.1';\n` +
        `GRANT ALL ON ${DATABASE}.* TO '${USER}'@'localhost';\n`,
    );
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const [dfile, dargs] = run(mariadbd, [
        '--no-defaults',
        `--datadir=${data}`,
        '--bind-address=127.0.0.1',
        `--port=${String(port)}`,
        `--socket=${socketPath}`,
        `--pid-file=${path.join(dir, 'mariadbd.pid')}`,
        `--init-file=${init}`,
        '--skip-name-resolve',
        '--skip-log-bin',
        '--innodb-flush-log-at-trx-commit=0',
        '--innodb-buffer-pool-size=16M',
      ]);
      const child = spawn(dfile, dargs, { stdio: ['ignore', 'pipe', 'pipe'] });
      // Printed once the init file ran and the port and socket accept connections.
      const ready = await untilReady(child, /ready for connections/, 60_000);
      if (ready === true) {
        return { host: '127.0.0.1', port, socketPath, user: USER, password: PASSWORD, database: DATABASE, stop: () => stopServer(child, cleanup, 'SIGTERM') };
      }
      if (attempt < 5 && /Address already in use|Can't start server: Bind/i.test(ready)) continue;
      throw new Error(`mariadbd did not start on 127.0.0.1:${String(port)}: ${ready}`);
    }
  } catch (e) {
    cleanup();
    throw e;
  }
}
