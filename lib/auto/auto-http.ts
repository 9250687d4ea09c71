// Names and attributes of hotspan/auto's HTTP spans (lib/auto/auto-record.ts), by
// OpenTelemetry's HTTP semantic conventions (the stable ones, v1.23 on):
//   - the name is the method (`GET`); `{method} {http.route}` needs a route,
//     which only a framework knows, so without one it is the method alone
//     (the express and fastify instruments give the route when they know it:
//     lib/auto/auto-route.ts). A method the conventions do not know is
//     `HTTP`, recorded as `_OTHER` with the original in
//     `http.request.method_original`. The path never goes in
//     the name: one name per method, however many URLs there are;
//   - the request in `http.request.method`, `url.path`, `url.query` (without
//     the `?`), `url.scheme`, `server.address`, `server.port`,
//     `network.protocol.version`, and for a client (http client, fetch)
//     `url.full`; the answer in `http.response.status_code`;
//   - body sizes, when a content-length says them, in
//     `http.request.body.size` and `http.response.body.size`;
//   - an error: a server span by a status >= 500, a client span by a status
//     >= 400, with `error.type` the status code; a request that failed with
//     `error.type` its error's code (or name) and `error.message`.
// Query values of the keys the conventions name as secrets are `REDACTED`
// in `url.query` and `url.full`.

export type Attrs = Record<string, string | number | boolean>;

/** The methods the conventions know (RFC 9110 and PATCH); any other is `_OTHER`. */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/** Query keys whose values the conventions say to redact by default. */
const SECRET_KEYS = new Set(['AWSAccessKeyId', 'Signature', 'sig', 'X-Goog-Signature']);

/** The span's name and method attributes for `method`. */
export function methodOf(method: string | undefined): { name: string; attrs: Attrs } {
  const m = method ?? '';
  if (KNOWN_METHODS.has(m)) return { name: m, attrs: { 'http.request.method': m } };
  return { name: 'HTTP', attrs: { 'http.request.method': '_OTHER', 'http.request.method_original': m } };
}

function redact(query: string): string {
  if (query === '') return query;
  return query
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq < 0) return part;
      return SECRET_KEYS.has(part.slice(0, eq)) ? `${part.slice(0, eq)}=REDACTED` : part;
    })
    .join('&');
}

/** A request target (`/path?query`) split into `url.path` and, when it has one, `url.query`; and the target with secrets redacted. */
export function targetOf(target: string | undefined): { attrs: Attrs; redacted: string } {
  const t = target ?? '';
  const q = t.indexOf('?');
  if (q < 0) return { attrs: { 'url.path': t }, redacted: t };
  const query = redact(t.slice(q + 1));
  return { attrs: { 'url.path': t.slice(0, q), 'url.query': query }, redacted: `${t.slice(0, q)}?${query}` };
}

/** `server.address` and `server.port` from a Host header (`name`, `name:port`, `[v6]:port`); the scheme's port when it has none. */
export function hostAttrs(host: string | undefined, scheme: string): Attrs {
  if (host === undefined || host === '') return {};
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host);
  if (m === null) return { 'server.address': host };
  const address = m[1].startsWith('[') ? m[1].slice(1, -1) : m[1];
  const port = m[2] !== undefined ? Number(m[2]) : scheme === 'https' ? 443 : scheme === 'http' ? 80 : undefined;
  return port === undefined ? { 'server.address': address } : { 'server.address': address, 'server.port': port };
}

/** A content-length header's value as a number, if it is one. */
export function bodySize(v: unknown): number | undefined {
  const n = Number(Array.isArray(v) ? v[0] : v);
  return Number.isFinite(n) && v !== undefined ? n : undefined;
}

/** Sets the status and, at or past `errorFrom`, the error; returns whether it is one. */
export function setStatus(attrs: Attrs, status: number | undefined, errorFrom: number): boolean {
  const code = status ?? 0;
  attrs['http.response.status_code'] = code;
  if (code < errorFrom) return false;
  attrs['error.type'] = String(code);
  return true;
}

/** A failed request's `error.type` (its code, else its class's name) and `error.message`. */
export function setFailure(attrs: Attrs, error: unknown): void {
  const e = error as { code?: unknown; name?: unknown; message?: unknown } | null | undefined;
  const type = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : '_OTHER';
  attrs['error.type'] = type;
  attrs['error.message'] = String(e?.message ?? error);
}

/** An HTTP server span's name and attributes from the incoming request. */
export function serverRequest(req: {
  method?: string;
  url?: string;
  httpVersion?: string;
  headers?: Record<string, unknown>;
  socket?: { encrypted?: boolean; remoteAddress?: string } | null;
}): { name: string; attrs: Attrs } {
  const { name, attrs: method } = methodOf(req.method);
  const scheme = req.socket?.encrypted === true ? 'https' : 'http';
  const host = req.headers?.host;
  const attrs: Attrs = { ...method, ...targetOf(req.url).attrs, 'url.scheme': scheme, ...hostAttrs(typeof host === 'string' ? host : undefined, scheme) };
  if (req.httpVersion !== undefined) attrs['network.protocol.version'] = req.httpVersion;
  const address = req.socket?.remoteAddress;
  if (address !== undefined) attrs['client.address'] = address;
  const bytes = bodySize(req.headers?.['content-length']);
  if (bytes !== undefined) attrs['http.request.body.size'] = bytes;
  return { name, attrs };
}

/** An outgoing request's (http client, fetch) name and attributes: `scheme` and `host` (a Host header's form) name the server, `target` is the path and query. */
export function clientRequest(method: string | undefined, scheme: string, host: string, target: string | undefined): { name: string; attrs: Attrs } {
  const { name, attrs: m } = methodOf(method);
  const t = targetOf(target);
  const attrs: Attrs = { ...m, ...t.attrs, 'url.scheme': scheme, ...hostAttrs(host, scheme), 'url.full': `${scheme}://${host}${t.redacted}` };
  return { name, attrs };
}
