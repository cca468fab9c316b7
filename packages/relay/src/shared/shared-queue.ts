import { randomBytes } from "node:crypto";
import type { Clock, Logger } from "@rd/common";
import { sql } from "@rd/common/kysely";
import { QUEUE_STATES, type QueueEntry, type QueueState } from "../state/queue-entry.js";
import { decodeLabels, encodeLabels } from "../state/queue-labels.js";
import type { NewQueueEntry, QueueStore } from "../state/queue-repository.js";
import { createSharedClaims, dueAt, queueRowOf } from "./shared-claims.js";
import { retryingDeadlocks, type SharedDb, transactionInOneTrip } from "./shared-database.js";
import { sharedDatabaseUnavailable } from "./shared-quota.js";
import { createSyncLeases } from "./sync-leases.js";

/** mysql2's errno of ER_DUP_ENTRY: a body id chosen here is taken already. */
const DUPLICATE_ENTRY = 1062;

/** A body's id: random, 1 … 2^48, so that rows can name their body before it is inserted. */
const newBodyId = () => randomBytes(6).readUIntBE(0, 6) + 1;

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

/**
 * The queue of several instances in the shared database: rows as in SQLite, each message's body
 * in `relay_queue_bodies` (one per message, written in the transaction of its rows, so a 202 or
 * 250 is answered only once rows and body are committed).
 *
 * A claim takes the row with `SELECT … FOR UPDATE SKIP LOCKED` (an instance never waits for, nor
 * takes, an entry another is claiming) and marks it `sending` with a lease of `leaseSecs()`;
 * concurrent claims, and concurrent ends, share one transaction (`shared-claims.ts`).
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
  const claims = createSharedClaims({ ...deps, syncLeases });
  const unavailable = (error: unknown) => sharedDatabaseUnavailable(error, logger);
  let step: number | undefined;
  /** `auto_increment_increment` (1 unless the server spaces ids, as Galera does), read once. */
  const autoIncrementStep = async () => {
    step ??= Number(
      (await sql<{ step: number }>`SELECT @@auto_increment_increment AS step`.execute(db)).rows[0]
        ?.step ?? 1,
    );
    return step;
  };

  /** Runs `work`, turning a database failure into 503 `unavailable`. */
  async function guarded<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** The row of each entry, without its body's id. */
  const rowOf = (entry: NewQueueEntry, now: number, bodyId: number | null) => ({
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
  });

  /** One message's rows (and body), each insert's id read back: the pks are exact. */
  async function insertRows(
    trx: SharedDb,
    entries: readonly NewQueueEntry[],
    now: number,
  ): Promise<number[]> {
    const body = entries.find((entry) => entry.body)?.body;
    let bodyId: number | null = null;
    if (body) {
      bodyId = newBodyId();
      await trx.insertInto("relay_queue_bodies").values({ id: bodyId, body }).execute();
    }
    const pks: number[] = [];
    for (const entry of entries) {
      const inserted = await trx
        .insertInto("relay_queue")
        .values(rowOf(entry, now, bodyId))
        .executeTakeFirst();
      pks.push(Number(inserted.insertId));
    }
    return pks;
  }

  /**
   * The intake's group: one multi-row INSERT for every body and one for every row, whatever the
   * number of messages (two statements, not two per message). A body's id is chosen here (a
   * random 48-bit number), so each row names its body without reading ids back; a collision
   * with a live body fails the insert (ER_DUP_ENTRY) and the transaction is tried again with
   * new ids. The rows' pks follow from the first one: InnoDB gives a multi-row INSERT of known
   * length consecutive values (`autoIncrementStep` apart) in every `innodb_autoinc_lock_mode`.
   * Each row comes back with its body's id.
   */
  async function insertGroupRows(
    groups: ReadonlyArray<{ entries: readonly NewQueueEntry[]; now: number }>,
  ): Promise<Array<Array<{ pk: number; bodyId: number | null }>>> {
    const bodies: Array<{ id: number; body: Buffer }> = [];
    const bodyIds = groups.map(({ entries }) => {
      const body = entries.find((entry) => entry.body)?.body;
      if (!body) return null;
      const id = newBodyId();
      bodies.push({ id, body });
      return id;
    });
    const rows = groups.flatMap(({ entries, now }, index) =>
      entries.map((entry) => rowOf(entry, now, bodyIds[index] ?? null)),
    );
    if (rows.length === 0) return groups.map(() => []);
    const step = await autoIncrementStep();
    const results = await transactionInOneTrip(db, [
      ...(bodies.length > 0 ? [db.insertInto("relay_queue_bodies").values(bodies)] : []),
      db.insertInto("relay_queue").values(rows),
    ]);
    let next = results.at(-1)?.insertId ?? 0;
    return groups.map(({ entries }, index) =>
      entries.map(() => {
        const pk = next;
        next += step;
        return { pk, bodyId: bodyIds[index] ?? null };
      }),
    );
  }

  return {
    async insert(entries, now) {
      const pks = await guarded(() =>
        retryingDeadlocks(
          () => db.transaction().execute((trx) => insertRows(trx, entries, now)),
          [DUPLICATE_ENTRY],
        ),
      );
      syncLeases.hold(pks.filter((_, index) => entries[index]?.estado === "sending"));
      return pks;
    },
    async insertGroups(groups) {
      const inserted = await guarded(() =>
        retryingDeadlocks(() => insertGroupRows(groups), [DUPLICATE_ENTRY]),
      );
      // Entries written `sending` are claimed by this instance (the intake's hand-over).
      for (const [index, { entries }] of groups.entries()) {
        for (const [at, entry] of entries.entries()) {
          const row = inserted[index]?.[at];
          if (row && entry.estado === "sending") {
            claims.hold(row.pk, { id: row.bodyId, alone: entries.length === 1 });
          }
        }
      }
      return inserted.map((rows) => rows.map((row) => row.pk));
    },
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
      claims.finish({ pk, estado: "sent", attempts, lastError: null, now }),
    markFailed: (pk, { attempts, lastError, now }) =>
      claims.finish({ pk, estado: "failed", attempts, lastError, now }),
    async duePks(now) {
      const rows = await db
        .selectFrom("relay_queue")
        .select("pk")
        .where(dueAt(now))
        .orderBy("created_at")
        .orderBy("pk")
        // Every due entry, as the SQLite queue reads them: a drain reads again only when its own
        // instance accepted more, so entries past a limit would wait for the next tick.
        .execute();
      return rows.map((row) => Number(row.pk));
    },
    claim: (pk, now) => claims.claim(pk, now),
    async reschedule(pk, { attempts, lastError, nextAttemptAt, now }) {
      claims.release(pk);
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
