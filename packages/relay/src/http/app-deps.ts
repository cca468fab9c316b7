import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Clock, Logging, Readiness, ServiceMetrics } from "@rd/common";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";
import type { AccessSettings } from "../access/access-settings.js";
import type { ApiThrottle } from "../access/api-throttle.js";
import type { ClientAuthenticator } from "../clients/client-authenticator.js";
import type { ClientService } from "../clients/client-service.js";
import type { ConfigStore } from "../config/config-store.js";
import type { RelayEnv } from "../config/env.js";
import type { DnsCheck } from "../dns-check/configured-dns-check.js";
import type { DomainService } from "../domains/domain-service.js";
import type { Ledger } from "../ledger/ledger.js";
import type { QueueService } from "../queue/queue-service.js";
import type { IdempotencyStore } from "../state/idempotency-repository.js";
import type { SubmissionService } from "../submission/submission-service.js";
import type { SuppressionList } from "../suppressions/suppression-list.js";
import type { WebhookService } from "../webhooks/webhook-service.js";

// The types `app.ts` and the route modules share, apart from `app.ts` so that a route module
// does not import the module that registers it.

/** Everything the HTTP layer needs, built by `main.ts`. */
export interface AppDeps {
  env: RelayEnv;
  config: ConfigStore;
  clock: Clock;
  logging: Logging;
  ledger: Ledger;
  throttle: ApiThrottle;
  authenticator: ClientAuthenticator;
  clients: ClientService;
  domains: DomainService;
  dnsCheck: DnsCheck;
  access: AccessSettings;
  submission: SubmissionService;
  queue: QueueService;
  /** `/suppressions`: each client's suppressed recipients. */
  suppressions: SuppressionList;
  /** `Idempotency-Key` of `/send` and `/send-raw`: the keys and first answers. */
  idempotency: IdempotencyStore;
  /** `/webhooks`: delivery-event endpoints. */
  webhooks: WebhookService;
  /** `GET /metrics`; the HTTP counter is fed by every answer. */
  metrics: ServiceMetrics;
  /** `GET /ready`; told when the app starts closing. */
  readiness: Readiness;
}

export type RelayApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** One resource's routes (`routes/<resource>.ts`): schemas and calls into a service. */
export type RouteModule = (app: RelayApp, deps: AppDeps) => void;
