import type { Clock, Logger } from "@rd/common";
import { type Selectable, sql } from "kysely";
import { QUEUE_STATES, type QueueEntry, type QueueState } from "../state/queue-entry.js";
import { decodeLabels, encodeLabels } from "../state/queue-labels.js";
import type { NewQueueEntry, QueueRow, QueueStore } from "../state/queue-repository.js";
import { retryingDeadlocks, type SharedDb, type SharedSchema } from "./shared-database.js";
import { sharedDatabaseUnavailable } from "./shared-quota.js";
import { createSyncLeases } from "./sync-leases.js";

/** Due entries one read returns; a drain reads again when it has worked through them. */
const DUE_BATCH = 500;

const ENTRY_COLUMNS = [
  "pk",
  "message_id",
  "client_id",
  "envelope_from",
  "rcpt",
  "estado",
  "attempts",
  "next_attempt_at",
  "last_error",
  "created_at",
] as const;

/** `text` as a LIKE pattern matching it anywhere, its own `%`, `_` and backslash taken literally. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** A `relay_queue` row as the queue's users see it (numbers from BIGINT columns, labels decoded). */
function queueRowOf(row: Selectable<SharedSchema["relay_queue"]>): QueueRow {
  const optional = (value: number | null) => (value === null ? null : Number(value));
  return {
    pk: Number(row.pk),
    message_id: row.message_id,
    client_id: row.client_id,
    envelope_from: row.envelope_from,
    rcpt: row.rcpt,
    estado: row.estado as QueueState,
    attempts: Number(row.attempts),
    next_attempt_at: Number(row.next_attempt_at),
    last_error: row.last_error,
    created_at: Number(row.created_at),
    spool_file: null,
    updated_at: Number(row.updated_at),
    finished_at: optional(row.finished_at),
    labels: decodeLabels(row.labels),
  };
}

/**
 * The queue of several instances in the shared database: rows as in SQLite, each message's body
 * in `relay_queue_bodies` (one per message, written in the transaction of its rows, so a 202 or
 * 250 is answered only once rows and body are committed).
 *
 * A claim takes the row with `SELECT … FOR UPDATE SKIP LOCKED` (an instance never waits for, nor
 * takes, an entry another is claiming) and marks it `sending` with a lease of `leaseSecs()`.
 * An entry still `sending` past its lease (its instance was killed, or lost the database) is due
 * again for every instance: delivery is at least once, and an attempt that outlives its lease
 * may be made twice (README, "Several instances"). A synchronous delivery's rows (inserted
 * `sending`, no body) hold a lease its instance renews while it lives (`sync-leases.ts`).
 */
export function createSharedQueue(deps: {
  db: SharedDb;
  leaseSecs: () => number;
  clock: Clock;
  logger: Logger;
}): QueueStore {
  const { db, logger } = deps;
  const syncLeases = createSyncLeases(deps);
  const unavailable = (error: unknown) => sharedDatabaseUnavailable(error, logger);

  /** Runs `work`, turning a database failure into 503 `unavailable`. */
  async function guarded<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw unavailable(error);
    }
  }

  async function insertRows(
    trx: SharedDb,
    entries: readonly NewQueueEntry[],
    now: number,
  ): Promise<number[]> {
    const body = entries.find((entry) => entry.body)?.body;
    let bodyId: number | null = null;
    if (body) {
      const inserted = await trx
        .insertInto("relay_queue_bodies")
        .values({ body })
        .executeTakeFirst();
      bodyId = Number(inserted.insertId);
    }
    const pks: number[] = [];
    for (const entry of entries) {
      const inserted = await trx
        .insertInto("relay_queue")
        .values({
          message_id: entry.message_id,
          client_id: entry.client_id,
          envelope_from: entry.envelope_from,
          rcpt: entry.rcpt,
          estado: entry.estado,
          attempts: 0,
          next_attempt_at: entry.next_attempt_at,
          lease_until: entry.estado === "sending" ? now + deps.leaseSecs() : null,
          body_id: bodyId,
          labels: encodeLabels(entry.labels),
          created_at: now,
          updated_at: now,
        })
        .executeTakeFirst();
      pks.push(Number(inserted.insertId));
    }
    return pks;
  }

  /** Ends an entry; its body goes once no recipient of the message still needs it. */
  async function finish(
    pk: number,
    change: { estado: "sent" | "failed"; attempts: number; lastError: string | null; now: number },
  ): Promise<void> {
    syncLeases.release(pk);
    await retryingDeadlocks(() =>
      db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable("relay_queue")
          .set({
            estado: change.estado,
            attempts: change.attempts,
            ...(change.lastError !== null && { last_error: change.lastError }),
            updated_at: change.now,
            finished_at: change.now,
            lease_until: null,
          })
          .where("pk", "=", pk)
          .executeTakeFirst();
        if (Number(row.numUpdatedRows) === 0) return;
        await sql`
        DELETE b FROM relay_queue_bodies b JOIN relay_queue q ON q.body_id = b.id
         WHERE q.pk = ${pk}
           AND NOT EXISTS (SELECT 1 FROM relay_queue p
                            WHERE p.body_id = b.id AND p.estado IN ('queued', 'sending'))
      `.execute(trx);
      }),
    );
  }

  return {
    async insert(entries, now) {
      const pks = await guarded(() =>
        retryingDeadlocks(() => db.transaction().execute((trx) => insertRows(trx, entries, now))),
      );
      syncLeases.hold(pks.filter((_, index) => entries[index]?.estado === "sending"));
      return pks;
    },
    insertGroups: (groups) =>
      guarded(() =>
        retryingDeadlocks(() =>
          db.transaction().execute(async (trx) => {
            const result: number[][] = [];
            for (const { entries, now } of groups) {
              result.push(await insertRows(trx, entries, now));
            }
            return result;
          }),
        ),
      ),
    // NOTE: InnoDB's commit is durable when it returns (innodb_flush_log_at_trx_commit = 1).
    syncCommitted: async () => undefined,
    async recordRetry(pk, { attempts, lastError, now }) {
      await db
        .updateTable("relay_queue")
        .set({ attempts, last_error: lastError, updated_at: now })
        .where("pk", "=", pk)
        .execute();
    },
    markSent: (pk, { attempts, now }) =>
      finish(pk, { estado: "sent", attempts, lastError: null, now }),
    markFailed: (pk, { attempts, lastError, now }) =>
      finish(pk, { estado: "failed", attempts, lastError, now }),
    async duePks(now) {
      const rows = await db
        .selectFrom("relay_queue")
        .select("pk")
        .where((eb) =>
          eb.or([
            eb.and([eb("estado", "=", "queued"), eb("next_attempt_at", "<=", now)]),
            eb.and([eb("estado", "=", "sending"), eb("lease_until", "<", now)]),
          ]),
        )
        .orderBy("created_at")
        .orderBy("pk")
        .limit(DUE_BATCH)
        .execute();
      return rows.map((row) => Number(row.pk));
    },
    claim: (pk, now) =>
      retryingDeadlocks(() =>
        db.transaction().execute(async (trx) => {
          const row = await trx
            .selectFrom("relay_queue")
            .selectAll()
            .where("pk", "=", pk)
            .where((eb) =>
              eb.or([
                eb.and([eb("estado", "=", "queued"), eb("next_attempt_at", "<=", now)]),
                eb.and([eb("estado", "=", "sending"), eb("lease_until", "<", now)]),
              ]),
            )
            .forUpdate()
            .skipLocked()
            .executeTakeFirst();
          if (!row) return undefined;
          await trx
            .updateTable("relay_queue")
            .set({ estado: "sending", updated_at: now, lease_until: now + deps.leaseSecs() })
            .where("pk", "=", pk)
            .execute();
          const body =
            row.body_id === null
              ? undefined
              : await trx
                  .selectFrom("relay_queue_bodies")
                  .select("body")
                  .where("id", "=", row.body_id)
                  .executeTakeFirst();
          const claimed: QueueRow = {
            ...queueRowOf(row),
            estado: "sending",
            updated_at: now,
            finished_at: null,
            ...(body && { body: Buffer.from(body.body) }),
          };
          return claimed;
        }),
      ),
    async reschedule(pk, { attempts, lastError, nextAttemptAt, now }) {
      await db
        .updateTable("relay_queue")
        .set({
          estado: "queued",
          attempts,
          last_error: lastError,
          next_attempt_at: nextAttemptAt,
          updated_at: now,
          lease_until: null,
        })
        .where("pk", "=", pk)
        .execute();
    },
    async list(filters) {
      let query = db.selectFrom("relay_queue").select(ENTRY_COLUMNS);
      if (filters.estado !== undefined) query = query.where("estado", "=", filters.estado);
      if (filters.rcpt !== undefined) {
        query = query.where(sql<boolean>`rcpt LIKE ${containsPattern(filters.rcpt)} ESCAPE '\\\\'`);
      }
      if (filters.message_id !== undefined) {
        query = query.where("message_id", "=", filters.message_id);
      }
      if (filters.client_id !== undefined) query = query.where("client_id", "=", filters.client_id);
      const rows = await guarded(() => query.orderBy("pk", "desc").limit(filters.limit).execute());
      return rows.map(
        (row): QueueEntry => ({
          ...row,
          pk: Number(row.pk),
          estado: row.estado as QueueState,
          attempts: Number(row.attempts),
          next_attempt_at: Number(row.next_attempt_at),
          created_at: Number(row.created_at),
        }),
      );
    },
    async messageRows(messageId) {
      const rows = await guarded(() =>
        db
          .selectFrom("relay_queue")
          .selectAll()
          .where("message_id", "=", messageId)
          .orderBy("pk")
          .execute(),
      );
      return rows.map(queueRowOf);
    },
    async labelsOf(messageId) {
      const row = await guarded(() =>
        db
          .selectFrom("relay_queue")
          .select(["client_id", "labels"])
          .where("message_id", "=", messageId)
          .limit(1)
          .executeTakeFirst(),
      );
      return row && { client_id: row.client_id, labels: decodeLabels(row.labels) };
    },
    async deleteFinishedBefore(cutoff) {
      const result = await db
        .deleteFrom("relay_queue")
        .where("finished_at", "is not", null)
        .where("finished_at", "<", cutoff)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async countByState() {
      const counts = Object.fromEntries(QUEUE_STATES.map((state) => [state, 0]));
      const rows = await db
        .selectFrom("relay_queue")
        .select(["estado", sql<number>`count(*)`.as("count")])
        .groupBy("estado")
        .execute();
      for (const { estado, count } of rows) counts[estado] = Number(count);
      return counts as Record<QueueState, number>;
    },
  };
}
