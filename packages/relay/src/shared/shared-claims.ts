import { groupBy } from "@rd/common";
import type { ExpressionBuilder, Selectable } from "@rd/common/kysely";
import { createGroupCommit } from "../state/group-commit.js";
import type { QueueState } from "../state/queue-entry.js";
import { decodeLabels } from "../state/queue-labels.js";
import type { QueueRow } from "../state/queue-repository.js";
import {
  retryingDeadlocks,
  type SharedDb,
  type SharedSchema,
  transactionInOneTrip,
} from "./shared-database.js";
import { SHARED_GATHER } from "./shared-gather.js";
import type { SyncLeases } from "./sync-leases.js";

/** A `relay_queue` row as the queue's users see it (numbers from BIGINT columns, labels decoded). */
export function queueRowOf(row: Selectable<SharedSchema["relay_queue"]>): QueueRow {
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

/** Due at `now`: queued and its time has come, or `sending` past its lease. */
function isDue(row: Selectable<SharedSchema["relay_queue"]>, now: number): boolean {
  return row.estado === "queued"
    ? Number(row.next_attempt_at) <= now
    : row.estado === "sending" && row.lease_until !== null && Number(row.lease_until) < now;
}

/** `isDue` as a condition of a query. */
export function dueAt(now: number) {
  return (eb: ExpressionBuilder<SharedSchema, "relay_queue">) =>
    eb.or([
      eb.and([eb("estado", "=", "queued"), eb("next_attempt_at", "<=", now)]),
      eb.and([eb("estado", "=", "sending"), eb("lease_until", "<", now)]),
    ]);
}

export interface Finish {
  pk: number;
  estado: "sent" | "failed";
  attempts: number;
  lastError: string | null;
  now: number;
}

export interface SharedClaims {
  claim(pk: number, now: number): Promise<QueueRow | undefined>;
  /** Ends an entry; its body goes once no recipient of the message still needs it. */
  finish(change: Finish): Promise<void>;
  /** An entry this instance wrote claimed already, and the body it names. */
  hold(pk: number, body: { id: number | null; alone: boolean }): void;
  /** The entry went back to the queue: this instance no longer holds it. */
  release(pk: number): void;
}

/**
 * Claims and ends of queue entries, each a group commit: the worker's concurrent calls share one
 * transaction (one round trip per statement and one redo-log flush for the batch, not per
 * entry). A claim batch locks its due rows with `SELECT … FOR UPDATE SKIP LOCKED`, so an entry
 * another instance holds is skipped, never waited for nor taken twice; each caller resolves only
 * once the transaction that carried its entry committed.
 */
export function createSharedClaims(deps: {
  db: SharedDb;
  leaseSecs: () => number;
  syncLeases: SyncLeases;
}): SharedClaims {
  const { db } = deps;
  // The body of each entry this instance claimed and has not ended: its end needs no read to
  // find it (a row ended without a claim here, as a synchronous delivery's, is read). `alone`:
  // the body's only row (a message of one recipient), so its end deletes it without asking
  // whether another row still needs it.
  const bodyOf = new Map<number, { id: number | null; alone: boolean }>();

  const claim = createGroupCommit(async (items: Array<{ pk: number; now: number }>) => {
    // One clock for the batch: the latest. Every pk asked for came from a due list read
    // before its own claim; an earlier clock could find an entry accepted since not yet due,
    // and the locking read would still hold it (REPEATABLE READ), so that the other instances
    // skip it too and it waits for the next tick.
    const now = Math.max(...items.map((item) => item.now));
    const claimed = await retryingDeadlocks(() =>
      db.transaction().execute(async (trx) => {
        // By primary key alone, the due rule checked here: with it in the WHERE, the optimizer
        // may scan the due index instead, and REPEATABLE READ keeps a lock on every row scanned,
        // so the other instances would skip entries nobody takes (they wait for a tick).
        const locked = await trx
          .selectFrom("relay_queue")
          .selectAll()
          .where("pk", "in", [...new Set(items.map((item) => item.pk))])
          .forUpdate()
          .skipLocked()
          .execute();
        const rows = locked.filter((row) => isDue(row, now));
        type Claimed = { row: QueueRow; body: { id: number | null; alone: boolean } };
        if (rows.length === 0) return new Map<number, Claimed>();
        await trx
          .updateTable("relay_queue")
          .set({ estado: "sending", updated_at: now, lease_until: now + deps.leaseSecs() })
          .where(
            "pk",
            "in",
            rows.map((row) => row.pk),
          )
          .execute();
        const bodyIds = [...new Set(rows.flatMap((row) => row.body_id ?? []))];
        const bodies =
          bodyIds.length === 0
            ? []
            : await trx
                .selectFrom("relay_queue_bodies")
                .select((eb) => [
                  "id",
                  "body",
                  // A message's rows are all written by its intake: this count never grows.
                  eb
                    .selectFrom("relay_queue")
                    .select(eb.fn.countAll().as("n"))
                    .whereRef("relay_queue.body_id", "=", "relay_queue_bodies.id")
                    .as("rows"),
                ])
                .where("id", "in", bodyIds)
                .execute();
        const bodyById = new Map(
          bodies.map((body) => [
            Number(body.id),
            { octets: Buffer.from(body.body), alone: Number(body.rows) === 1 },
          ]),
        );
        return new Map(
          rows.map((row): [number, Claimed] => {
            const body = row.body_id === null ? undefined : bodyById.get(Number(row.body_id));
            const entry = { ...queueRowOf(row), estado: "sending" as const, updated_at: now };
            return [
              Number(row.pk),
              {
                row: { ...entry, finished_at: null, ...(body && { body: body.octets }) },
                body: {
                  id: row.body_id === null ? null : Number(row.body_id),
                  alone: body?.alone ?? false,
                },
              },
            ];
          }),
        );
      }),
    );
    for (const [pk, row] of claimed) bodyOf.set(pk, row.body);
    // A pk asked twice in one batch is given once.
    return items.map((item) => {
      const row = claimed.get(item.pk)?.row;
      claimed.delete(item.pk);
      return row;
    });
  }, SHARED_GATHER);

  /**
   * Of bodies that other rows may share, those no pending row needs. No read here may lock a
   * row of another message: a lock on a queued row makes every other instance's claim skip it,
   * and nobody takes it until a tick (the subquery of a DELETE is a locking read, which MariaDB
   * may plan over the whole due index). So the body rows are locked instead (two instances
   * ending rows of one message take turns there), and only then are the pending rows read,
   * without locks, in a snapshot taken after that turn.
   */
  async function unusedOf(trx: SharedDb, bodyIds: number[]): Promise<number[]> {
    if (bodyIds.length === 0) return [];
    await trx
      .selectFrom("relay_queue_bodies")
      .select("id")
      .where("id", "in", bodyIds)
      .forUpdate()
      .execute();
    const pending = await trx
      .selectFrom("relay_queue")
      .select("body_id")
      .distinct()
      .where("body_id", "in", bodyIds)
      .where("estado", "in", ["queued", "sending"])
      .execute();
    const kept = new Set(pending.map((row) => Number(row.body_id)));
    return bodyIds.filter((id) => !kept.has(id));
  }

  /** The UPDATEs that end `items`: entries ended alike (the usual case) share one. */
  function endStatements(trx: SharedDb, items: Finish[]) {
    const alike = groupBy(items, (item) =>
      JSON.stringify([item.estado, item.attempts, item.lastError, item.now]),
    );
    return [...alike.values()].map((group) => {
      const [{ estado, attempts, lastError, now }] = group as [Finish, ...Finish[]];
      return trx
        .updateTable("relay_queue")
        .set({
          estado,
          attempts,
          ...(lastError !== null && { last_error: lastError }),
          updated_at: now,
          finished_at: now,
          lease_until: null,
        })
        .where(
          "pk",
          "in",
          group.map((item) => item.pk),
        );
    });
  }

  const finish = createGroupCommit(async (items: Finish[]) => {
    const pks = items.map((item) => item.pk).sort((a, b) => a - b);
    const known = pks.flatMap((pk) => bodyOf.get(pk) ?? []);
    const alone = known.flatMap((body) => (body.alone && body.id !== null ? body.id : []));
    const unknown = pks.filter((pk) => !bodyOf.has(pk));
    const mayShare = unknown.length > 0 || known.some((body) => !body.alone && body.id !== null);
    const deleteBodies = (trx: SharedDb, ids: number[]) =>
      ids.length === 0 ? [] : [trx.deleteFrom("relay_queue_bodies").where("id", "in", ids)];
    await retryingDeadlocks(async () => {
      // The usual batch (entries claimed here, each its message's only row) reads nothing: it
      // is sent whole, one round trip for the transaction.
      if (!mayShare) {
        await transactionInOneTrip(db, [...endStatements(db, items), ...deleteBodies(db, alone)]);
        return;
      }
      await db.transaction().execute(async (trx) => {
        for (const statement of endStatements(trx, items)) await statement.execute();
        // A body whose only row this is goes with it; one other rows may share goes once none
        // of them is pending (`unusedOf`).
        const owners =
          unknown.length === 0
            ? []
            : await trx
                .selectFrom("relay_queue")
                .select("body_id")
                // By pk alone (our rows, locked already): no other index to plan a scan over.
                .where("pk", "in", unknown)
                .forUpdate()
                .execute();
        const sharedIds = [
          ...new Set(
            [
              ...known.flatMap((body) => (body.alone ? [] : body.id)),
              ...owners.map((row) => row.body_id),
            ]
              .filter((id) => id !== null)
              .map(Number),
          ),
        ];
        const unused = [...alone, ...(await unusedOf(trx, sharedIds))];
        for (const statement of deleteBodies(trx, unused)) await statement.execute();
      });
    });
    for (const pk of pks) bodyOf.delete(pk);
    return items.map(() => undefined);
  }, SHARED_GATHER);

  return {
    claim: (pk, now) => claim({ pk, now }),
    finish(change) {
      deps.syncLeases.release(change.pk);
      return finish(change);
    },
    hold: (pk, body) => bodyOf.set(pk, body),
    release: (pk) => bodyOf.delete(pk),
  };
}
