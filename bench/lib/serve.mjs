// What the bench's HTTP servers share: a stand-in for a handler's own work,
// and listening on 127.0.0.1 (port 0, printed as the JSON line bench/lib/http.mjs
// waits for), closing on SIGTERM.
import http from 'node:http';

/** About `steps` multiply-xor rounds of work (a few ns each), standing in for a handler's code. */
export function work(seed, steps) {
  let h = seed | 0;
  for (let i = 0; i < steps; i++) h = Math.imul(h ^ i, 0x9e3779b1) >>> 0;
  return h;
}

/** Serves `handle` on 127.0.0.1 (an ephemeral port), prints { port, mode }, closes on SIGTERM. `createServer`: a patched node:http's. */
export function serve(handle, mode, createServer = http.createServer) {
  const server = createServer(handle);
  server.keepAliveTimeout = 30000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: server.address().port, mode })}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
  return server;
}
