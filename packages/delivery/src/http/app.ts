// buildApp(deps): the whole HTTP application, without listening (main.ts listens; tests inject).
//
// To add a route module:
//   1. write `src/http/routes/…-routes.ts` exporting a `FastifyPluginAsyncTypebox<Options>`
//      whose Options name exactly the services it uses (a route holds no logic);
//   2. give every route `config: { access: "public" | "user" | "apiKey" | "session" }` (see
//      access-control.ts; a route without it makes buildApp throw — for routes a third-party
//      plugin registers, call `setScopeAccess(scope, level)` in your plugin first) and TypeBox
//      schemas (validator.ts: bodies are not coerced; they also feed /openapi.json);
//   3. add those services to `AppDeps` below and register the module in `buildApp` with
//      `await app.register(myRoutes, { myService: deps.myService })`;
//   4. build the services in `createServices` (services.ts), which main.ts and tests share.
// Services throw the errors of src/errors.ts: the error handler turns them into `{error}`.
import cookie from "@fastify/cookie";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import {
  type Logging,
  observeHttp,
  openApiOptions,
  type Readiness,
  requestIdOptions,
} from "@rd/common";
import Fastify, { type FastifyInstance } from "fastify";
import type { MonitorEvents } from "../monitor/monitor-events.js";
import type { NotificationService } from "../notifications/notification-service.js";
import type { DeliveryMetrics } from "../observability/delivery-metrics.js";
import type { ReleaseService } from "../releases/release-service.js";
import { MAX_TAG_LENGTH } from "../releases/release-tag.js";
import type { RepoService } from "../repositories/repo-service.js";
import type { HealthProbe, StatusService } from "../status/status-service.js";
import type { AuthService } from "../users/auth-service.js";
import type { TokenService } from "../users/token-service.js";
import type { WebhookManager } from "../webhooks/webhook-manager.js";
import type { WebhookReceiver } from "../webhooks/webhook-receiver.js";
import { type AccessLevel, installAccessControl } from "./access-control.js";
import { installCrossSiteGuard } from "./cross-site-guard.js";
import { createErrorHandler, installErrorHandler } from "./error-handler.js";
import { authRoutes } from "./routes/auth-routes.js";
import { dashboardRoutes } from "./routes/dashboard-routes.js";
import { docsRoutes } from "./routes/docs-routes.js";
import { eventsRoutes } from "./routes/events-routes.js";
import { filesRoutes } from "./routes/files-routes.js";
import { generalRoutes } from "./routes/general-routes.js";
import { metricsRoutes } from "./routes/metrics-routes.js";
import { notificationsRoutes } from "./routes/notifications-routes.js";
import { releasesRoutes } from "./routes/releases-routes.js";
import { repositoriesRoutes } from "./routes/repositories-routes.js";
import { statusRoutes } from "./routes/status-routes.js";
import { webhookReceiverRoutes } from "./routes/webhook-receiver-routes.js";
import { webhooksRoutes } from "./routes/webhooks-routes.js";
import { typeBoxValidator } from "./validator.js";

/** Largest accepted request body (JSON payloads, webhook deliveries). */
const BODY_LIMIT_BYTES = 1024 * 1024;
/** A tag of the longest accepted length still fits when every character is percent-encoded. */
const MAX_PARAM_LENGTH = MAX_TAG_LENGTH * 9;

export interface AppDeps {
  readonly version: string;
  readonly logging: Logging;
  /** Undefined: API-key-only endpoints refuse every request. */
  readonly apiKey: string | undefined;
  /** `PUBLIC_URL`; https turns on `Secure` cookies. */
  readonly publicUrl: string | undefined;
  readonly database: HealthProbe;
  readonly tokens: TokenService;
  readonly auth: AuthService;
  readonly repos: RepoService;
  readonly status: StatusService;
  readonly releases: ReleaseService;
  /** `LOCAL_STORAGE_DIR`, served at `GET /files/<bucket>/<key>`. */
  readonly localFilesRoot: string;
  /** `FILES_INLINE_ACTIVE_CONTENT`: HTML, SVG, JavaScript… under `/files` not sent as downloads. */
  readonly filesInlineActiveContent: boolean;
  /** `LATEST_MAX_AGE_SECONDS`: how long caches keep `latest/` under `/files`. */
  readonly latestMaxAgeSeconds: number;
  readonly notifications: NotificationService;
  readonly webhookReceiver: WebhookReceiver;
  readonly webhooks: WebhookManager;
  /** `GET /metrics`; the HTTP counter is fed by every answer. */
  readonly metrics: DeliveryMetrics;
  /** `GET /monitor/events`: publications and scheduler rounds, live. */
  readonly monitor: MonitorEvents;
  /** `GET /ready`; main.ts marks it stopping when shutdown begins. */
  readonly readiness: Readiness;
}

/** OpenAPI security requirement of each access level. */
const SECURITY: Record<AccessLevel, Array<Record<string, string[]>>> = {
  public: [],
  user: [{ apiKey: [] }, { cookie: [] }, { bearer: [] }],
  apiKey: [{ apiKey: [] }],
  session: [{ cookie: [] }, { bearer: [] }],
  metrics: [{ apiKey: [] }, { apiKeyBearer: [] }],
};

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const log = deps.logging.forTarget("delivery::http");
  const app = Fastify({
    logger: false,
    // `X-Request-Id`: the caller's when reasonable, else generated (see observeHttp below).
    ...requestIdOptions,
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Errors the router raises before any route (a malformed percent-encoding, an over-long
    // parameter) get the same `{error}` body as every other error.
    frameworkErrors: createErrorHandler(log),
    // Idle keep-alive connections are closed at shutdown; requests in flight are awaited.
    forceCloseConnections: "idle",
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(typeBoxValidator);

  installErrorHandler(app, log);
  // First: refusals of access control are answered with an id, logged and counted too.
  observeHttp(app, { logger: log, metrics: deps.metrics });
  await app.register(cookie);
  installCrossSiteGuard(app);
  installAccessControl(app, { apiKey: deps.apiKey, tokens: deps.tokens });
  await app.register(
    swagger,
    openApiOptions({
      title: "Release-delivery service",
      version: deps.version,
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
        cookie: { type: "apiKey", in: "cookie", name: "access_token" },
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        apiKeyBearer: { type: "http", scheme: "bearer", description: "the API key (/metrics)" },
      },
      securityOf: (route) => SECURITY[route.config?.access ?? "public"],
    }),
  );

  await app.register(generalRoutes, {
    version: deps.version,
    database: deps.database,
    readiness: deps.readiness,
  });
  await app.register(metricsRoutes, { metrics: deps.metrics });
  await app.register(docsRoutes);
  await app.register(authRoutes, {
    auth: deps.auth,
    secureCookies: deps.publicUrl?.startsWith("https://") ?? false,
  });
  await app.register(repositoriesRoutes, { repos: deps.repos });
  await app.register(statusRoutes, { status: deps.status });
  await app.register(releasesRoutes, { releases: deps.releases });
  await app.register(filesRoutes, {
    root: deps.localFilesRoot,
    inlineActiveContent: deps.filesInlineActiveContent,
    latestMaxAgeSeconds: deps.latestMaxAgeSeconds,
  });
  await app.register(webhookReceiverRoutes, { receiver: deps.webhookReceiver });
  await app.register(webhooksRoutes, { webhooks: deps.webhooks });
  await app.register(notificationsRoutes, { notifications: deps.notifications });
  await app.register(eventsRoutes, { monitor: deps.monitor });
  await app.register(dashboardRoutes, { auth: deps.auth });

  await app.ready();
  return app;
}
