// hotspan/auto's fastify instrument: the route of each request fastify
// serves, on its HTTP server span (lib/auto/auto-route.ts says how).
//
// fastify 5 publishes a TracingChannel, `fastify.request.handler`, around
// each route handler's call, with the request and its route's URL as
// registered, plugin prefixes included (`/api/items/:id`). This instrument
// only subscribes to its `start`, published once per request that reached a
// route's handler (its hooks passed); fastify's 404 handler publishes
// nothing, so a request that matched no route keeps the method as its name.
// A handler's failure is on the span already by the status fastify answers
// with (500: an error). Versions before 5 publish no such channel: no route.

import * as dc from 'node:diagnostics_channel';

import type { RouteRecorder } from './auto-route';

/** The context fastify publishes (its Hooks reference: Diagnostics Channel Hooks). */
interface HandlerContext {
  request?: { raw?: unknown };
  route?: { url?: unknown };
}

/** The fastify instrument. */
export function instrumentFastify(rec: RouteRecorder): void {
  const onStart = (m: unknown): void => {
    const ctx = m as HandlerContext;
    const raw = ctx.request?.raw;
    const url = ctx.route?.url;
    if (raw !== null && typeof raw === 'object' && typeof url === 'string') rec.route(raw, url);
  };
  const channel = 'tracing:fastify.request.handler:start';
  dc.subscribe(channel, onStart);
  rec.onStop(() => dc.unsubscribe(channel, onStart));
}
