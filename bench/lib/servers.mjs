// Servers for the client-cost cases (bench/lib/client-cost.mjs), from
// Debian's packages, on 127.0.0.1 on a free port, in a temporary directory
// removed by stop(). As root, PostgreSQL runs as nobody through setpriv.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Runs the server until its output matches `ready`; stop() ends it with `signal` and removes `dir`.
async function serve(file, args, ready, signal, dir) {
  const server = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((resolve, reject) => {
    let out = '';
    const take = (c) => {
      out += c;
      if (ready.test(out)) resolve();
    };
    server.stdout.on('data', take);
    server.stderr.on('data', take);
    server.once('exit', () => reject(new Error(`${path.basename(file)} exited: ${out}`)));
  });
  return async () => {
    const gone = new Promise((resolve) => server.once('exit', resolve));
    server.kill(signal);
    await gone;
    rmSync(dir, { recursive: true, force: true });
  };
}

export async function startPostgres() {
  const versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => b - a);
  const bin = `/usr/lib/postgresql/${versions[0]}/bin`;
  const asRoot = process.getuid() === 0;
  const as = (file, args) => (asRoot ? ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--reset-env', file, ...args]] : [file, args]);
  const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-bench-pg-'));
  if (asRoot) chownSync(dir, 65534, 65534);
  const [f, a] = as(path.join(bin, 'initdb'), ['-D', path.join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync']);
  const init = spawnSync(f, a, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb: ${init.stderr}`);
  const port = await freePort();
  const [pf, pa] = as(path.join(bin, 'postgres'), ['-D', path.join(dir, 'data'), '-h', '127.0.0.1', '-p', String(port), '-k', dir, '-c', 'fsync=off']);
  return { port, stop: await serve(pf, pa, /ready to accept connections/, 'SIGINT', dir) };
}

export async function startRedis() {
  const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-bench-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no'];
  return { port, stop: await serve('redis-server', args, /Ready to accept connections/, 'SIGTERM', dir) };
}
