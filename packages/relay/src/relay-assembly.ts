/**
 * The relay's wiring over its opened state: adapters, services, ports and the app, and the
 * `listen()`/`close()` that start and stop them (`main.ts` opens the state, then calls this).
 *
 * Extension points: build a new service in `assembleRelay` from the adapters already there
 * (`db`, `config`, `ledger`, `clock`, `logging`, `dns`), pass it to `buildApp` through
 * `AppDeps`, and if it owns resources (a listener, a ticker) start it in `listen()` and stop it
 * in `close()`, before the database closes.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import {
  bootStep,
  type Clock,
  closeHttpGracefully,
  type Logging,
  withinDeadline,
} from "@rd/common";
import type { Database } from "better-sqlite3";
import { createAccessSettings } from "./access/access-settings.js";
import { createAddressGate } from "./access/address-gate.js";
import { createApiThrottle } from "./access/api-throttle.js";
import { connectSharedWindows } from "./access/redis-throttle.js";
import {
  type ClientAuthenticator,
  createClientAuthenticator,
} from "./clients/client-authenticator.js";
import { createClientService } from "./clients/client-service.js";
import type { ConfigStore } from "./config/config-store.js";
import type { RelayEnv } from "./config/env.js";
import { parseListenAddress } from "./config/listen-address.js";
import { createDkimSigner } from "./dkim/dkim-signer.js";
import { createDnsResolver, type DnsResolver } from "./dns/dns-resolver.js";
import { createDnsCheck } from "./dns-check/configured-dns-check.js";
import { createDomainService } from "./domains/domain-service.js";
import { buildApp } from "./http/app.js";
import type { RelayApp } from "./http/app-deps.js";
import type { Ledger } from "./ledger/ledger.js";
import { createRelayMetrics } from "./observability/relay-metrics.js";
import { createRelayReadiness } from "./observability/relay-readiness.js";
import { createOutbound } from "./outbound/outbound.js";
import { createQueueIntake } from "./queue/queue-intake.js";
import { recoverQueue } from "./queue/queue-recovery.js";
import { createQueueService } from "./queue/queue-service.js";
import { createQueueTicker } from "./queue/queue-ticker.js";
import { createQueueWorker } from "./queue/queue-worker.js";
import { createSpoolStore, SPOOL_DIR_NAME } from "./queue/spool-store.js";
import { SHARED_GATHER } from "./shared/shared-gather.js";
import type { SharedState } from "./shared/shared-state.js";
import {
  createConfiguredSubmissionServer,
  SMTP_TARGET,
} from "./smtp/configured-submission-server.js";
import type { SubmissionServer } from "./smtp/submission-server.js";
import { createClientRepository } from "./state/client-repository.js";
import { createIdempotencyRepository } from "./state/idempotency-repository.js";
import { withBatchedFinishes } from "./state/queue-finishes.js";
import { createQueueRepository } from "./state/queue-repository.js";
import { createQuotaRepository } from "./state/quota-repository.js";
import { createSuppressionRepository } from "./state/suppression-repository.js";
import { createWebhookJournal, createWebhookRepository } from "./state/webhook-repository.js";
import { createDomainQuota, createSharedDomainQuota } from "./submission/domain-quota.js";
import { createMessageDispatch, createPersistedDispatch } from "./submission/message-dispatch.js";
import { createSubmissionService } from "./submission/submission-service.js";
import { createSuppressionList } from "./suppressions/suppression-list.js";
import { VERSION } from "./version.js";
import { createWebhooks } from "./webhooks/webhooks.js";

/** Where a boot error about the state folder points (the variable to fix). */
export const STATE_DIR = { where: "RELAY_DB" };

// In-flight requests get this long to finish at shutdown (decisions: at most 10 s).
export const SHUTDOWN_GRACE_MS = 10_000;

/** A built relay: its app and the adapters it owns. */
export interface Relay {
  readonly app: RelayApp;
  readonly config: ConfigStore;
  readonly db: Database;
  readonly ledger: Ledger;
  readonly dns: DnsResolver;
  /** The client credential check, shared with SMTP AUTH. */
  readonly authenticator: ClientAuthenticator;
  /** The SMTP submission port; undefined when `smtp_listen` is absent. */
  readonly smtp: SubmissionServer | undefined;
  /** Listens on `listen` of the configuration; resolves with the bound `host:port`. */
  listen(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish (bounded), closes ledger and database. */
  close(): Promise<void>;
}

/** Everything `createRelay` opens before it builds the rest: the one place that closes them. */
export interface OpenedState {
  env: RelayEnv;
  logging: Logging;
  clock: Clock;
  config: ConfigStore;
  db: Database;
  ledger: Ledger;
  /** Present with `RELAY_DATABASE_URL`: clients, settings and quotas come from there. */
  shared: SharedState | undefined;
}

/** Adapters, services, ports and the app over the opened state; throws without closing it. */
export async function assembleRelay(opened: OpenedState): Promise<Relay> {
  const { env, logging, clock, config, db, shared } = opened;
  const log = logging.forTarget("relay");
  const current = config.current();
  const dns = createDnsResolver(env.dnsServer);

  if (env.authToken === undefined) {
    log.warn(
      "RELAY_AUTH_TOKEN is unset or empty: management endpoints and /send are open to every address the allowlist admits",
    );
  }

  const clientRepository = shared?.clients ?? createClientRepository(db);
  const authenticator = createClientAuthenticator(clientRepository);
  const queueRepository = createQueueRepository(db);
  // With RELAY_DATABASE_URL the queue (rows and bodies) is the shared database's.
  const queue = shared?.queue ?? withBatchedFinishes(queueRepository);
  // `GET /metrics`: counted from the ledger's events and the accepted submissions.
  const metrics = createRelayMetrics({
    queueCounts: shared?.queueCounts ?? (() => queueRepository.countByState()),
  });
  // Delivery-event webhooks: the ledger's outcome events go to their durable outbox.
  const webhooks = createWebhooks({
    outbox: shared
      ? {
          store: shared.webhooks,
          journal: createWebhookJournal(db),
          ownerOf: shared.queue.labelsOf,
        }
      : { store: createWebhookRepository(db), ownerOf: queueRepository.labelsOf },
    clock,
    logger: logging.forTarget("relay::webhooks"),
  });
  const ledger = webhooks.observe(metrics.observeLedger(opened.ledger));
  const suppressions = createSuppressionList({
    store: shared?.suppressions ?? createSuppressionRepository(db),
    emit: (event, requestId) => ledger.emit(event, requestId),
    clientExists: (id) => clientRepository.find(id) !== undefined,
    clock,
    logger: log,
  });
  const outbound = createOutbound({
    settings: () => config.current(),
    dns,
    queue,
    emit: (event, requestId) => ledger.emit(event, requestId),
    onPermanentFailure: suppressions.recordBounce,
    clock,
  });
  // The asynchronous queue: recovered before any request, drained by the ticker and /queue/tick.
  const queueLog = logging.forTarget("relay::queue");
  const spool = createSpoolStore(join(env.dbDir, SPOOL_DIR_NAME));
  await bootStep(STATE_DIR, `cannot recover the queue in ${env.dbDir}`, () =>
    recoverQueue({ queue: queueRepository, spool, clock, logger: queueLog }),
  );
  const queueWorker = createQueueWorker({
    queue,
    spool,
    attempt: outbound.attempt,
    requireTls: outbound.requireTls,
    emit: (event, requestId) => ledger.emit(event, requestId),
    onPermanentFailure: suppressions.recordBounce,
    config: () => config.current(),
    clock,
    logger: queueLog,
  });
  const ticker = createQueueTicker({
    worker: queueWorker,
    intervalSecs: current.tick_interval_secs,
    logger: queueLog,
  });
  const enqueue = createQueueIntake({
    queue,
    spool: shared ? undefined : spool,
    clock,
    logger: queueLog,
    // Asynchronous mode attempts a message as soon as it is accepted; the ticks are for retries.
    onQueued: () => ticker.wake(),
    // On the shared database a claim is a transaction of round trips, and both instances would
    // read the same due list; locally it is one statement, and the body is read from the spool.
    ...(shared && { handOver: ticker.handOver, ...SHARED_GATHER }),
  });
  // One submission pipeline for both ports; the ports differ only in where a message goes.
  const submission = metrics.observeSubmission(
    createSubmissionService({
      config,
      clock,
      ledger,
      signer: createDkimSigner({ now: () => clock.now() }),
      suppressions,
      queue,
      quota: shared
        ? createSharedDomainQuota(shared.quota, clock)
        : createDomainQuota(createQuotaRepository(db), clock),
      dispatch: createMessageDispatch({
        asyncMode: env.asyncMode,
        deliverNow: outbound.deliver,
        enqueue,
      }),
    }),
  );
  // One per-IP count for both ports: SMTP connections and AUTH attempts count as HTTP requests
  // (with RELAY_REDIS=redis://…, HTTP requests count in that Redis, shared by every instance).
  const redis = env.redisUrl ? await connectSharedWindows(env.redisUrl, log) : undefined;
  const throttle = createApiThrottle(() => config.current().api_rate_per_min, clock, redis);
  // The SMTP port: a message is always in the queue before its 250; in synchronous mode its
  // delivery then starts at once (decisions, "SMTP submission").
  const smtp = await createConfiguredSubmissionServer(current, env.configPath, {
    gate: createAddressGate(() => config.current(), throttle),
    authenticator,
    submission,
    dispatch: createPersistedDispatch({
      enqueue,
      ...(!env.asyncMode && { afterPersist: () => queueWorker.tickSoon() }),
    }),
    ledger,
    logger: logging.forTarget(SMTP_TARGET),
    sessionOpened: metrics.smtpSessionOpened,
  });
  const app = await buildApp({
    env,
    config,
    clock,
    logging,
    ledger,
    throttle,
    authenticator,
    clients: createClientService({ clients: clientRepository, authenticator, config, clock }),
    domains: createDomainService({ config, machineHostname: hostname(), logger: log }),
    dnsCheck: createDnsCheck({ store: config, resolver: dns }),
    access: createAccessSettings(config),
    submission,
    queue: createQueueService({ repository: queue, worker: queueWorker }),
    suppressions,
    idempotency: shared?.idempotency ?? createIdempotencyRepository(db),
    webhooks: webhooks.service,
    metrics,
    readiness: createRelayReadiness({
      readDatabase: () => shared?.checkReachable() ?? queueRepository.countByState(),
      stateDir: env.dbDir,
    }),
  });

  let closed: Promise<void> | undefined;
  return {
    app,
    config,
    db,
    ledger,
    dns,
    authenticator,
    smtp,
    async listen() {
      const { host, port } = parseListenAddress(config.current().listen);
      await bootStep({ where: env.configPath, field: "listen" }, "cannot listen", () =>
        app.listen({ host, port }),
      );
      ticker.start();
      await webhooks.start();
      await bootStep({ where: env.configPath, field: "smtp_listen" }, "cannot listen", async () =>
        smtp?.listen(),
      );
      const address = app.server.address();
      const bound = typeof address === "object" && address ? address.port : port;
      log.info("relay listening", {
        version: VERSION,
        listen: `${host}:${bound}`,
        mode: env.asyncMode ? "async" : "sync",
      });
      return `${host}:${bound}`;
    },
    close() {
      closed ??= (async () => {
        // The queue takes no new entry from now on; attempts in hand finish (bounded below).
        const queueStopped = Promise.all([ticker.stop(), queueWorker.stop()]);
        // SMTP transactions in hand finish within the same grace (bounded by the port itself).
        const smtpClosed = smtp?.close();
        await closeHttpGracefully(app, SHUTDOWN_GRACE_MS, () =>
          log.warn("in-flight requests did not finish in time; closing their connections"),
        );
        if (!(await withinDeadline(queueStopped, SHUTDOWN_GRACE_MS))) {
          log.warn(
            "queue deliveries still in flight at shutdown; they are retried after the restart",
          );
        }
        await smtpClosed;
        // After the deliveries in hand: what is still in flight now fails locally and is retried.
        await outbound.close();
        await webhooks.stop();
        await ledger.close();
        await throttle.close();
        db.close();
        await shared?.close();
        logging.flush();
      })();
      return closed;
    },
  };
}
