// hotspan/auto's express instrument: the route of each request express
// serves, on its HTTP server span (lib/auto/auto-route.ts says how).
//
// express 5's router (the `router` package, 2.3 on) publishes a
// TracingChannel, `express.router.request`, for each middleware and route
// handler it calls, with the request, the Layer called and the path pattern
// that matched: a route handler's route path (`/items/:id`), a middleware's or
// mounted router's mount path (`/api`). This instrument only subscribes to its
// `start`. The route is known when a handler of a Route starts (the Layer is
// one of `req.route`'s); its mount paths are those of the routers the
// request entered to get there, kept per request as they start: a Router
// mounted with `use(path, router)` is a Layer whose handle has a `stack` of
// its own, and an app mounted in an app (`app.use(path, subApp)`) is express's
// `mounted_app` Layer, whose sub-app is then `req.app`. A Route's Layer is
// looked for in the stacks the request entered, so a router mounted at two
// paths gets the one the request went through. express 4 and routers before
// 2.3 publish nothing: no route.

import * as dc from 'node:diagnostics_channel';

import { joinRoute, type RouteRecorder } from './auto-route';

interface Layer {
  route?: unknown;
}
interface App {
  router?: { stack?: unknown };
}
interface Req {
  route?: { stack?: unknown };
  app?: App;
}
/** The context express's router publishes (router's README: Diagnostics). */
interface HandlerContext {
  req?: Req;
  layer?: Layer;
  handler?: { stack?: unknown; name?: unknown };
  route?: unknown;
  param?: unknown;
}

/** One request's way through the routers: the mount path (a route prefix) of each stack of Layers it entered. */
interface Routing {
  readonly mounts: Map<readonly Layer[], string>;
  /** A sub-app being entered: its prefix, and the app it is mounted in (req.app until the sub-app's own handle runs). */
  app?: { prefix: string; parent: App | undefined };
}

const stackOf = (v: unknown): readonly Layer[] | undefined => (Array.isArray(v) ? (v as Layer[]) : undefined);

/** A pattern as a route: a string as it is, a RegExp as its source form; anything else is no route. */
function pattern(p: unknown): string | undefined {
  if (typeof p === 'string') return p;
  if (p instanceof RegExp) return String(p);
  return undefined;
}

/** The express instrument. */
export function instrumentExpress(rec: RouteRecorder): void {
  const requests = new WeakMap<object, Routing>();
  const onStart = (m: unknown): void => {
    const ctx = m as HandlerContext;
    const req = ctx.req;
    const layer = ctx.layer;
    if (req === null || typeof req !== 'object' || layer === null || typeof layer !== 'object' || ctx.param !== undefined) return;
    let r = requests.get(req);
    if (r === undefined) {
      // The first Layer a request reaches is in its app's own router: the root, under no mount path.
      r = { mounts: new Map() };
      const root = stackOf(req.app?.router?.stack);
      if (root !== undefined) r.mounts.set(root, '');
      requests.set(req, r);
    }
    // The first Layer inside a sub-app just entered: its router's stack is under the sub-app's mount path.
    if (r.app !== undefined && req.app !== r.app.parent) {
      const sub = stackOf(req.app?.router?.stack);
      if (sub !== undefined) r.mounts.set(sub, r.app.prefix);
      r.app = undefined;
    }
    // The prefix of the stack holding a Layer that passes `test`, if the request entered that stack.
    const prefixOf = (test: (l: Layer) => boolean): string | undefined => {
      for (const [stack, prefix] of r.mounts) if (stack.some(test)) return prefix;
      return undefined;
    };
    const route = req.route;
    if (route !== undefined && stackOf(route.stack)?.includes(layer) === true) {
      // A handler of a Route: ctx.route is the Route's path (the one of its paths that matched).
      const path = pattern(ctx.route);
      const prefix = prefixOf((l) => l.route === route);
      if (path !== undefined && prefix !== undefined) rec.route(req, joinRoute(prefix, path));
      return;
    }
    if (layer.route !== undefined) return;
    const mount = pattern(ctx.route);
    const sub = stackOf(ctx.handler?.stack);
    const isApp = ctx.handler?.name === 'mounted_app';
    if (mount === undefined || (sub === undefined && !isApp)) return;
    const prefix = prefixOf((l) => l === layer);
    if (prefix === undefined) return;
    if (sub !== undefined) r.mounts.set(sub, joinRoute(prefix, mount));
    else r.app = { prefix: joinRoute(prefix, mount), parent: req.app };
  };
  const channel = 'tracing:express.router.request:start';
  dc.subscribe(channel, onStart);
  rec.onStop(() => dc.unsubscribe(channel, onStart));
}
