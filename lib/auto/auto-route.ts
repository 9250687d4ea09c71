// What hotspan/auto's web framework instruments (lib/auto/auto-express.ts,
// lib/auto/auto-fastify.ts) share: how they tell the recorder the route a
// request matched, and how a route is named.
//
// By OpenTelemetry's HTTP semantic conventions (stable), a server span whose
// route is known is named `{method} {http.route}` (`GET /items/:id`) and
// carries `http.route`, the matched path template with the mount paths it is
// under (`/api/items/:id`), never the request's own path. A request that
// matched no route (a 404) keeps the method alone as its name.
//
// The frameworks publish the route on a TracingChannel with the request
// (express's router: `express.router.request`; fastify:
// `fastify.request.handler`); the recorder finds the HTTP server span by that
// request (a WeakMap from the IncomingMessage, kept by the http instrument),
// so no AsyncLocalStorage is needed. The span is renamed before it ends, so
// the file and the OTLP export (which take its name and attributes when it
// ends: lib/auto/auto-export.ts) both see the route.

/** What the route instruments use of the recorder (lib/auto/auto-record.ts). */
export interface RouteRecorder {
  /**
   * `request` (an http.IncomingMessage) matched `route`: its server span, if
   * one is open, gets `http.route` and the name `{method} {route}`. A later
   * call for the same request wins (express: a handler that passed the
   * request on to another route).
   */
  route(request: object, route: string): void;
  /** Called at stop. */
  onStop(fn: () => void): void;
}

/** The server span's name for `route`: `method` is the span's name without a route (`GET`, or `HTTP` for a method the conventions do not know). */
export function routeName(method: string, route: string): string {
  return `${method} ${route}`;
}

/**
 * A route template under a mount path: `/api` and `/items/:id` give
 * `/api/items/:id`; `/` (or nothing) under `/api` gives `/api`, and a mount
 * at `/` adds nothing. Exactly one slash between the two.
 */
export function joinRoute(prefix: string, path: string): string {
  const head = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  if (path === '' || path === '/') return head === '' ? '/' : head;
  return path.startsWith('/') ? head + path : `${head}/${path}`;
}
