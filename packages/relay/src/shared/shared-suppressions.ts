import { groupBy, type Logger } from "@rd/common";
import { Errors } from "../errors.js";
import { createGroupCommit } from "../state/group-commit.js";
import {
  chunks,
  NO_CLIENT,
  type SuppressionRow,
  type SuppressionSource,
  type SuppressionStore,
  toSuppressionRow,
} from "../state/suppression-repository.js";
import type { SharedDb } from "./shared-database.js";
import { SHARED_GATHER } from "./shared-gather.js";
import { sharedDatabaseUnavailable } from "./shared-quota.js";

/** A (client, address) pair as a map key (neither holds a NUL). */
const pairKey = (clientId: string, address: string) => `${clientId}\0${address}`;

const COLUMNS = ["id", "client_id", "address", "reason", "source", "created_at"] as const;

/**
 * The suppression lists in the shared database (`relay_suppressions`): an address suppressed
 * through any instance is skipped by every instance's next send. A send whose recipients cannot
 * be looked up is refused with 503 (nothing accepted), as when its quota cannot be counted; a
 * change through the API that cannot be written is 500 `persist_failed`.
 */
export function createSharedSuppressions(db: SharedDb, logger: Logger): SuppressionStore {
  const table = "relay_suppressions" as const;
  const toRow = (row: {
    id: number | string;
    client_id: string;
    address: string;
    reason: string;
    source: string;
    created_at: string;
  }): SuppressionRow =>
    toSuppressionRow({ ...row, id: Number(row.id), source: row.source as SuppressionSource });
  const persistFailed = (error: unknown) => {
    logger.error("suppression change not written to the shared database", {
      error: String(error),
    });
    return Errors.persistFailed("the shared database did not take the change");
  };
  const one = (clientId: string, address: string) =>
    db
      .selectFrom(table)
      .select(COLUMNS)
      .where("client_id", "=", clientId)
      .where("address", "=", address)
      .executeTakeFirst();

  /**
   * The lookups of concurrent sends, a group commit: under load one SELECT answers the
   * recipients of every send that arrived while the previous one ran (each a read made after
   * its send asked), instead of one statement per send.
   */
  const lookups = createGroupCommit(
    async (items: Array<{ clientId: string; addresses: readonly string[] }>) => {
      const pairs = items.flatMap(({ clientId, addresses }) =>
        addresses.map((address) => ({ clientId, address })),
      );
      const found = new Map<string, SuppressionRow>();
      for (const part of chunks(pairs)) {
        const byClient = groupBy(part, (pair) => pair.clientId);
        const rows = await db
          .selectFrom(table)
          .select(COLUMNS)
          .where((eb) =>
            eb.or(
              [...byClient].map(([clientId, wanted]) =>
                eb.and([
                  eb("client_id", "=", clientId),
                  eb(
                    "address",
                    "in",
                    wanted.map((pair) => pair.address),
                  ),
                ]),
              ),
            ),
          )
          .execute();
        for (const row of rows) found.set(pairKey(row.client_id, row.address), toRow(row));
      }
      return items.map(({ clientId, addresses }) =>
        [...new Set(addresses)].flatMap((address) => found.get(pairKey(clientId, address)) ?? []),
      );
    },
    SHARED_GATHER,
  );

  return {
    async add(entry) {
      const scope = entry.client_id ?? NO_CLIENT;
      try {
        // NOTE: INSERT IGNORE keeps the first entry of a (client, address) pair, so two
        // instances recording the same bounce at once leave one row.
        const result = await db
          .insertInto(table)
          .ignore()
          .values({ ...entry, client_id: scope })
          .executeTakeFirst();
        const row = await one(scope, entry.address);
        if (!row) throw new Error("suppression row vanished after its insert");
        return { row: toRow(row), created: Number(result.numInsertedOrUpdatedRows ?? 0) > 0 };
      } catch (error) {
        throw persistFailed(error);
      }
    },
    async find(clientId, addresses) {
      try {
        return await lookups({ clientId: clientId ?? NO_CLIENT, addresses });
      } catch (error) {
        throw sharedDatabaseUnavailable(error, logger);
      }
    },
    async remove(clientId, address) {
      try {
        const result = await db
          .deleteFrom(table)
          .where("client_id", "=", clientId ?? NO_CLIENT)
          .where("address", "=", address)
          .executeTakeFirst();
        return Number(result.numDeletedRows) > 0;
      } catch (error) {
        throw persistFailed(error);
      }
    },
    async list({ client_id, before, limit }) {
      let query = db.selectFrom(table).select(COLUMNS);
      if (client_id !== undefined) query = query.where("client_id", "=", client_id ?? NO_CLIENT);
      if (before !== undefined) query = query.where("id", "<", before);
      const rows = await query.orderBy("id", "desc").limit(limit).execute();
      return rows.map(toRow);
    },
  };
}
