import { type Clock, type Logger, messageOf } from "@rd/common";
import type { RelayEnv } from "../config/env.js";
import type { ConfigFile } from "../config/schema.js";
import { DEFAULTS } from "../config/schema.js";
import type { IdempotencyStore } from "../state/idempotency-repository.js";
import type { QueueState } from "../state/queue-entry.js";
import type { QueueStore } from "../state/queue-repository.js";
import type { SharedQuotaRepository } from "../state/quota-repository.js";
import type { SuppressionStore } from "../state/suppression-repository.js";
import { createSharedClients, type SharedClients } from "./shared-clients.js";
import { createSharedConfigStore, type SharedConfigStore } from "./shared-config-store.js";
import { openSharedDatabase } from "./shared-database.js";
import { createSharedIdempotency } from "./shared-idempotency.js";
import { createSharedQueue } from "./shared-queue.js";
import { createSharedQuotaRepository } from "./shared-quota.js";
import { createSharedSuppressions } from "./shared-suppressions.js";
import { createSharedWebhooks, type SharedWebhookStore } from "./shared-webhooks.js";

/**
 * How often an instance asks the database whether the settings, the clients or the webhook
 * endpoints changed (three counters, one primary-key read). A change made on another instance
 * applies here within this period plus one read: well inside the 5 s the relay promises.
 */
export const SHARED_REFRESH_MS = 1_000;

/** What several instances share through `RELAY_DATABASE_URL`. */
export interface SharedState {
  readonly config: SharedConfigStore;
  readonly clients: SharedClients;
  readonly quota: SharedQuotaRepository;
  readonly queue: QueueStore;
  readonly suppressions: SuppressionStore;
  readonly idempotency: IdempotencyStore;
  /** Webhook endpoints, the outbox every instance sends, attempts. */
  readonly webhooks: SharedWebhookStore;
  /**
   * The queue's rows per state as last read (at most a second old), for a caller that cannot
   * wait (the metrics' scrape); every call past that age starts a new read.
   */
  queueCounts(): Record<QueueState, number>;
  /** Throws while the last refresh could not read the database (for `GET /ready`). */
  checkReachable(): void;
  /** Stops the refresh and closes the pool. */
  close(): Promise<void>;
}

/**
 * Opens the shared database (migrating it), imports the file's settings when it is empty, reads
 * settings, clients and webhook subscriptions, and keeps them current. Throws when the database
 * cannot be reached.
 */
export async function openSharedState(deps: {
  url: string;
  file: ConfigFile;
  env: RelayEnv;
  clock: Clock;
  logger: Logger;
}): Promise<SharedState> {
  const { logger } = deps;
  const db = await openSharedDatabase(deps.url);
  let config: SharedConfigStore;
  let clients: SharedClients;
  let webhooks: SharedWebhookStore;
  try {
    config = await createSharedConfigStore({ db, file: deps.file, env: deps.env, logger });
    clients = await createSharedClients(db);
    webhooks = await createSharedWebhooks(db, logger);
  } catch (error) {
    await db.destroy();
    throw error;
  }

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let failing = false;
  let closed = false;

  async function refresh(): Promise<void> {
    try {
      const row = await db
        .selectFrom("relay_shared")
        .select(["settings_version", "clients_version", "webhooks_version"])
        .where("id", "=", 1)
        .executeTakeFirstOrThrow();
      await config.refresh(Number(row.settings_version));
      await clients.refresh(Number(row.clients_version));
      await webhooks.refresh(Number(row.webhooks_version));
      if (failing) logger.info("shared database reachable again; settings and clients current");
      failing = false;
    } catch (error) {
      // The last settings and clients stay in force until the database answers again.
      if (!failing) {
        logger.warn("shared database unreachable: settings and clients are not refreshed", {
          error: messageOf(error),
        });
      }
      failing = true;
    }
  }

  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => {
      running = refresh().finally(schedule);
    }, SHARED_REFRESH_MS);
    timer.unref();
  };
  schedule();

  const queue = createSharedQueue({
    db,
    // An attempt is bounded by the SMTP step timeout (a 0 there means the default of 30 s).
    leaseSecs: () => 2 * (config.current().smtp_timeout_secs || DEFAULTS.smtp_timeout_secs),
    clock: deps.clock,
    logger,
  });
  let counts = { queued: 0, sending: 0, sent: 0, failed: 0 };
  let countedAt = 0;

  return {
    config,
    clients,
    quota: createSharedQuotaRepository(db, logger),
    queue,
    idempotency: createSharedIdempotency(db, logger),
    suppressions: createSharedSuppressions(db, logger),
    webhooks,
    checkReachable() {
      if (failing) throw new Error("the shared database did not answer the last refresh");
    },
    queueCounts() {
      if (Date.now() - countedAt >= SHARED_REFRESH_MS && !closed) {
        countedAt = Date.now();
        Promise.resolve(queue.countByState()).then(
          (next) => {
            counts = next;
          },
          () => undefined,
        );
      }
      return counts;
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
      await db.destroy();
    },
  };
}
