/**
 * `buildApp(deps)`: the relay's HTTP application, without listening (tests call `inject`).
 *
 * Extension points (for the send, queue and check routes):
 * - A route module is a function `(app: RelayApp, deps: AppDeps) => void` in
 *   `routes/<resource>.ts` holding schemas and calls into a service, no logic. Add it to
 *   `ROUTE_MODULES` below.
 * - The services it needs come through `AppDeps`: add a field there and pass the service from
 *   `main.ts` (`createRelay`), where every adapter and service is built.
 * - Route options `config.auth` choose the credential (`none`, `admin` by default, `client`,
 *   `client-or-open`; see `request-guard.ts`); a `client` route finds `request.client` set.
 *   Set `bodyLimit` per route for the large bodies (the default is `ADMIN_BODY_LIMIT`).
 * - Throw errors of the catalog `src/errors.ts`; the error handler writes the wire body.
 */

import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { observeHttp, requestIdOptions } from "@rd/common";
import { typeBoxValidatorCompiler } from "@rd/common/typebox";
import Fastify from "fastify";
import { Errors } from "../errors.js";
import type { AppDeps, RelayApp, RouteModule } from "./app-deps.js";
import { createErrorHandler } from "./error-handler.js";
import { useJsonBodyParser } from "./json-body-parser.js";
import { RELAY_OPENAPI } from "./openapi.js";
import { installRequestGuard } from "./request-guard.js";
import { allowlistRoutes } from "./routes/allowlist.js";
import { checkRoutes } from "./routes/check.js";
import { clientRoutes } from "./routes/clients.js";
import { docsRoutes } from "./routes/docs.js";
import { domainRoutes } from "./routes/domains.js";
import { healthRoutes } from "./routes/health.js";
import { messageRoutes } from "./routes/messages.js";
import { metricsRoutes } from "./routes/metrics.js";
import { openApiRoutes } from "./routes/openapi.js";
import { queueRoutes } from "./routes/queue.js";
import { rateLimitRoutes } from "./routes/ratelimit.js";
import { sendRoutes } from "./routes/send.js";
import { suppressionRoutes } from "./routes/suppressions.js";
import { webhookRoutes } from "./routes/webhooks.js";

// Management bodies are small; the send routes raise their own limit per route.
export const ADMIN_BODY_LIMIT = 64 * 1024;
// The longest host name (253 characters) must fit a `{domain}` path parameter; Fastify's
// default of 100 answers 414 for long valid domains.
const MAX_PARAM_LENGTH = 253;

/** The route modules, in registration order. */
const ROUTE_MODULES: readonly RouteModule[] = [
  healthRoutes,
  openApiRoutes,
  docsRoutes,
  metricsRoutes,
  domainRoutes,
  checkRoutes,
  clientRoutes,
  rateLimitRoutes,
  allowlistRoutes,
  sendRoutes,
  queueRoutes,
  messageRoutes,
  suppressionRoutes,
  webhookRoutes,
];

export async function buildApp(deps: AppDeps): Promise<RelayApp> {
  const logger = deps.logging.forTarget("relay::http");
  const errorHandler = createErrorHandler(logger);
  const app = Fastify({
    logger: false,
    // `X-Request-Id`: the caller's when reasonable, else generated (see observeHttp below).
    ...requestIdOptions,
    bodyLimit: ADMIN_BODY_LIMIT,
    // Client addresses come from the request guard's own trusted-proxy rule, not Fastify's.
    trustProxy: false,
    return503OnClosing: true,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The router's own errors (a malformed percent-encoding, an over-long parameter) get the
    // same `{error, message}` body as every other error.
    frameworkErrors: errorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as RelayApp;

  // TypeBox checks bodies exactly as declared (no coercion, unknown fields refused when the
  // schema says so); path and query strings are converted to the declared types.
  app.setValidatorCompiler(typeBoxValidatorCompiler);
  // Bodies are JSON only: any other content type is 415 rather than a string the schema refuses.
  app.removeContentTypeParser("text/plain");
  useJsonBodyParser(app);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(async (request) => {
    throw Errors.notFound(`no route ${request.method} ${request.url.split("?")[0]}`);
  });

  // First: refusals of the guard below are answered with an id, logged and counted too.
  // NOTE: the relay passes each request's id to the lines written for it (README, "Request ids").
  observeHttp(app, { logger, metrics: deps.metrics, requestContext: false });
  if (logger.isEnabled("debug")) {
    app.addHook("onRequest", async (request) => {
      logger.debug("request started", {
        method: request.method,
        path: request.url.split("?")[0],
        request_id: request.id,
      });
    });
  }
  await installRequestGuard(app, {
    config: deps.config,
    throttle: deps.throttle,
    authenticator: deps.authenticator,
    authToken: deps.env.authToken,
  });

  // NOTE: at shutdown Node closes only the keep-alive connections idle at that moment; one busy
  // with a request would then stay open until its keep-alive timeout. Answering the requests
  // still in flight with `Connection: close` lets every connection end with its response.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
    deps.readiness.markStopping();
  });
  app.addHook("onSend", async (_request, reply) => {
    if (closing) reply.header("connection", "close");
  });

  // Before the routes: it documents each route as it is registered.
  await app.register(swagger, RELAY_OPENAPI);
  for (const register of ROUTE_MODULES) register(app, deps);
  await app.ready();
  return app;
}
