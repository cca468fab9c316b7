import type { Logger } from "@rd/common";
import { sql } from "@rd/common/kysely";
import {
  ATTEMPTS_KEPT,
  type WebhookAttemptRow,
  type WebhookEndpointRow,
  type WebhookOutboxRow,
  type WebhookStore,
} from "../state/webhook-repository.js";
import { raiseCounter, retryingDeadlocks, type SharedDb } from "./shared-database.js";
import { sharedDatabaseUnavailable } from "./shared-quota.js";

/** The shared endpoints' store, its subscriptions answered from memory. */
export interface SharedWebhookStore extends WebhookStore {
  /** Reads the subscriptions again when `version` (`webhooks_version`) moved. */
  refresh(version: number): Promise<void>;
}

/**
 * The webhooks of several instances in the shared database: one set of endpoints, one outbox
 * that every instance's dispatcher sends. A claim takes due rows with
 * `SELECT … FOR UPDATE SKIP LOCKED` and leases them, as the shared queue does: two instances
 * never take one row, and the rows of an instance that died are due again once its lease lapses.
 *
 * Which event types have a subscriber is kept in memory, as the clients are: a change of the
 * endpoints raises `webhooks_version` in its transaction and applies here at once; the other
 * instances read them again at their next refresh. So an event no endpoint takes costs no
 * statement (nor a local journal row), and a new endpoint gets every instance's events within
 * that refresh.
 */
export async function createSharedWebhooks(
  db: SharedDb,
  logger: Logger,
): Promise<SharedWebhookStore> {
  let types = new Set<string>();
  let version = -1;

  /**
   * The counter first, then the endpoints: a change in between is read again next time. A read
   * that started before another one's change and ends after it is not applied over it.
   */
  async function load(): Promise<void> {
    const row = await db
      .selectFrom("relay_shared")
      .select("webhooks_version")
      .where("id", "=", 1)
      .executeTakeFirst();
    const endpoints = await db.selectFrom("relay_webhook_endpoints").select("events").execute();
    const read = Number(row?.webhooks_version ?? 0);
    if (read < version) return;
    types = new Set(endpoints.flatMap((endpoint) => JSON.parse(endpoint.events) as string[]));
    version = read;
  }

  /**
   * Runs `change` and raises the counter in one transaction, then reads the types again (if that
   * read fails, the next refresh makes it: the counter moved).
   */
  async function write<T>(change: (trx: SharedDb) => Promise<T>): Promise<T> {
    const result = await db.transaction().execute(async (trx) => {
      const changed = await change(trx);
      await raiseCounter(trx, "webhooks_version");
      return changed;
    });
    await load().catch(() => undefined);
    return result;
  }

  /** Runs `work`, turning a database failure into 503 `unavailable` (for the API). */
  async function guarded<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw sharedDatabaseUnavailable(error, logger);
    }
  }

  await load();
  return {
    addEndpoint(endpoint) {
      return guarded(async () => {
        await write((trx) =>
          trx
            .insertInto("relay_webhook_endpoints")
            .values({ ...endpoint, events: JSON.stringify(endpoint.events) })
            .execute(),
        );
      });
    },
    endpoints() {
      return guarded(async () => {
        const rows = await db
          .selectFrom("relay_webhook_endpoints")
          .selectAll()
          .orderBy("created_at")
          .orderBy("id")
          .execute();
        return rows.map(
          (row): WebhookEndpointRow => ({ ...row, events: JSON.parse(row.events) as string[] }),
        );
      });
    },
    removeEndpoint(id) {
      return guarded(async () => {
        const result = await write((trx) =>
          trx.deleteFrom("relay_webhook_endpoints").where("id", "=", id).executeTakeFirst(),
        );
        return Number(result.numDeletedRows) > 0;
      });
    },
    recentAttempts(endpointId) {
      return guarded(async () => {
        const rows = await db
          .selectFrom("relay_webhook_attempts")
          .select([
            "event_id",
            "event_type",
            "attempt",
            "at",
            "status",
            "latency_ms",
            "error",
            "outcome",
          ])
          .where("endpoint_id", "=", endpointId)
          .orderBy("pk", "desc")
          .limit(ATTEMPTS_KEPT)
          .execute();
        return rows as WebhookAttemptRow[];
      });
    },
    pendingCount(endpointId) {
      return guarded(async () => {
        const row = await db
          .selectFrom("relay_webhook_outbox")
          .select((eb) => eb.fn.countAll().as("count"))
          .where("endpoint_id", "=", endpointId)
          .executeTakeFirstOrThrow();
        return Number(row.count);
      });
    },
    subscribed: (eventType) => types.has(eventType),
    async refresh(next) {
      if (next !== version) await load();
    },
    async enqueue(event) {
      // NOTE: `events` is a JSON array in a text column; JSON_CONTAINS finds the subscribers
      // inside the database, in the insert's own statement. IGNORE: a journal row forwarded
      // again after a crash does not add a second copy.
      const result = await sql`
        INSERT IGNORE INTO relay_webhook_outbox
          (endpoint_id, event_id, event_type, body, attempts, next_attempt_at, expires_at)
        SELECT id, ${event.event_id}, ${event.event_type}, ${event.body}, 0, ${event.now},
               ${event.expires_at}
          FROM relay_webhook_endpoints
         WHERE JSON_CONTAINS(events, JSON_QUOTE(${event.event_type}))`.execute(db);
      return Number(result.numAffectedRows ?? 0);
    },
    claimDue(endpointId, now, limit, leaseUntil) {
      return retryingDeadlocks(() =>
        db.transaction().execute(async (trx) => {
          const rows = await trx
            .selectFrom("relay_webhook_outbox")
            .select([
              "pk",
              "endpoint_id",
              "event_id",
              "event_type",
              "body",
              "attempts",
              "expires_at",
            ])
            .where("endpoint_id", "=", endpointId)
            .where("next_attempt_at", "<=", now)
            .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", now)]))
            .orderBy("next_attempt_at")
            .orderBy("pk")
            .limit(limit)
            .forUpdate()
            .skipLocked()
            .execute();
          if (rows.length === 0) return [];
          await trx
            .updateTable("relay_webhook_outbox")
            .set({ lease_until: leaseUntil })
            .where(
              "pk",
              "in",
              rows.map((row) => row.pk),
            )
            .execute();
          return rows.map(
            (row): WebhookOutboxRow => ({
              ...row,
              pk: Number(row.pk),
              attempts: Number(row.attempts),
              expires_at: Number(row.expires_at),
            }),
          );
        }),
      );
    },
    settle(row, attempt, nextAttemptAt) {
      return retryingDeadlocks(() =>
        db.transaction().execute(async (trx) => {
          // An endpoint removed while its request was in flight records nothing.
          await sql`
            INSERT INTO relay_webhook_attempts
              (endpoint_id, event_id, event_type, attempt, at, status, latency_ms, error, outcome)
            SELECT id, ${attempt.event_id}, ${attempt.event_type}, ${attempt.attempt},
                   ${attempt.at}, ${attempt.status}, ${attempt.latency_ms}, ${attempt.error},
                   ${attempt.outcome}
              FROM relay_webhook_endpoints WHERE id = ${row.endpoint_id}`.execute(trx);
          // The newest ATTEMPTS_KEPT stay: older ones go, below the oldest of those kept.
          const kept = await trx
            .selectFrom("relay_webhook_attempts")
            .select("pk")
            .where("endpoint_id", "=", row.endpoint_id)
            .orderBy("pk", "desc")
            .offset(ATTEMPTS_KEPT - 1)
            .limit(1)
            .executeTakeFirst();
          if (kept) {
            await trx
              .deleteFrom("relay_webhook_attempts")
              .where("endpoint_id", "=", row.endpoint_id)
              .where("pk", "<", kept.pk)
              .execute();
          }
          if (attempt.outcome === "retrying") {
            await trx
              .updateTable("relay_webhook_outbox")
              .set({ attempts: attempt.attempt, next_attempt_at: nextAttemptAt, lease_until: null })
              .where("pk", "=", row.pk)
              .execute();
          } else {
            await trx.deleteFrom("relay_webhook_outbox").where("pk", "=", row.pk).execute();
          }
        }),
      );
    },
    // Leases stay: another instance may hold them; those of a dead one lapse by themselves.
    releaseLeases() {},
  };
}
