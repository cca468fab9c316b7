import { AsyncResource } from "node:async_hooks";
import type { FastifyInstance } from "fastify";
import { accessLogHook } from "./access-log.js";
import type { Logger } from "./logger.js";
import { type ServiceMetrics, UNMATCHED_ROUTE } from "./metrics.js";
import { runInRequest } from "./request-context.js";
import { REQUEST_ID_HEADER } from "./request-id.js";

export interface HttpObservability {
  /** Where the access log goes (`<service>::http`). */
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  /**
   * Whether the request's id reaches the lines written on its behalf by itself, through an
   * `AsyncLocalStorage` (default). `false`: the service passes the id to its log lines explicitly
   * (`withRequest`). NOTE: on Node 20 an `AsyncLocalStorage` turns on V8's promise hooks for the
   * whole process, some 6–8% of the relay's CPU a message under load (README of the relay).
   */
  readonly requestContext?: boolean;
}

/**
 * What both services observe of every HTTP request; install it first, before any hook that may
 * refuse a request, so that refusals are observed too:
 * - the answer carries `X-Request-Id` (see `requestIdOptions`), and every log line written while
 *   the request is handled carries it as `request_id` (the logger reads it from the context, or
 *   the service passes it: see `requestContext`);
 * - one access-log line per answer (`accessLogHook`);
 * - `<prefix>_http_requests_total{route,status}` counts it.
 */
export function observeHttp(app: FastifyInstance, options: HttpObservability): void {
  // Each request's async context (`currentRequestId`), unless the service passes ids itself.
  const contexts =
    options.requestContext === false ? undefined : new WeakMap<object, AsyncResource>();
  app.addHook("onRequest", (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    if (!contexts) return done();
    runInRequest(request.id, () => {
      contexts.set(request, new AsyncResource("http-request"));
      done();
    });
  });
  // NOTE: a body arrives through socket events, outside the request's async context: the
  // handler and its services get the context back here, once the body is read.
  if (contexts) {
    app.addHook("preValidation", (request, _reply, done) => {
      const context = contexts.get(request);
      if (context) context.runInAsyncScope(done);
      else done();
    });
  }
  const accessLog = accessLogHook(options.logger);
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    options.metrics.httpRequests.inc({ route, status: String(reply.statusCode) });
    await accessLog(request, reply);
  });
}
