import type { Database, Statement } from "better-sqlite3";

/** Why an address is on a suppression list. */
export type SuppressionSource = "bounce" | "manual";

/** One suppressed address of one client (schema: migration `suppressions`). */
export interface SuppressionRow {
  /** Ascending with every new entry: the listing's order and its cursor. */
  readonly id: number;
  /** The client whose sends skip the address; null: `/send` of an open instance. */
  readonly client_id: string | null;
  /** Lower case (see `suppressions/suppression-list.ts`). */
  readonly address: string;
  readonly reason: string;
  readonly source: SuppressionSource;
  /** ISO 8601 UTC. */
  readonly created_at: string;
}

export type NewSuppression = Omit<SuppressionRow, "id">;

/** `GET /suppressions`: newest first, `limit` rows with an id below `before`. */
export interface SuppressionFilter {
  /** Only this client's; undefined: every client's (admin). */
  readonly client_id?: string | null;
  readonly before?: number;
  readonly limit: number;
}

type Maybe<T> = T | Promise<T>;

/**
 * The suppression lists of every client: this SQLite repository (synchronous) or the shared
 * database's (`shared/shared-suppressions.ts`). Its users await every call.
 */
export interface SuppressionStore {
  /** Adds the entry unless its client already has the address; returns the row as stored. */
  add(entry: NewSuppression): Maybe<{ row: SuppressionRow; created: boolean }>;
  /** The entries of one client among `addresses` (lower case). */
  find(clientId: string | null, addresses: readonly string[]): Maybe<SuppressionRow[]>;
  /** False when the client had no such entry. */
  remove(clientId: string | null, address: string): Maybe<boolean>;
  list(filter: SuppressionFilter): Maybe<SuppressionRow[]>;
}

/**
 * NOTE: `client_id` is stored as '' for the open instance's sends rather than NULL, so that the
 * unique key (client_id, address) holds for it too (NULLs never collide in a unique index).
 */
export const NO_CLIENT = "";

interface StoredRow extends Omit<SuppressionRow, "client_id"> {
  client_id: string;
}

export const toSuppressionRow = (row: StoredRow): SuppressionRow => ({
  ...row,
  client_id: row.client_id === NO_CLIENT ? null : row.client_id,
});

/** Largest number of addresses one `find` query names (SQLite's bound-parameter limit is far above). */
const FIND_CHUNK = 500;

export function chunks<T>(items: readonly T[], size = FIND_CHUNK): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) {
    result.push(items.slice(start, start + size));
  }
  return result;
}

export function createSuppressionRepository(db: Database): SuppressionStore {
  const COLUMNS = "id, client_id, address, reason, source, created_at";
  const insert = db.prepare<[string, string, string, string, string]>(
    `INSERT INTO suppressions (client_id, address, reason, source, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (client_id, address) DO NOTHING`,
  );
  const one = db.prepare<[string, string], StoredRow>(
    `SELECT ${COLUMNS} FROM suppressions WHERE client_id = ? AND address = ?`,
  );
  const remove = db.prepare<[string, string]>(
    "DELETE FROM suppressions WHERE client_id = ? AND address = ?",
  );
  // Every accepted message screens its recipients: one prepared statement per list length (most
  // messages have one or a few), not one prepared for every call.
  const findStatements = new Map<number, Statement<string[], StoredRow>>();
  const findStatement = (count: number) => {
    let statement = findStatements.get(count);
    if (!statement) {
      statement = db.prepare<string[], StoredRow>(
        `SELECT ${COLUMNS} FROM suppressions
         WHERE client_id = ? AND address IN (${Array.from({ length: count }, () => "?").join(", ")})`,
      );
      findStatements.set(count, statement);
    }
    return statement;
  };

  return {
    add(entry) {
      const scope = entry.client_id ?? NO_CLIENT;
      const { changes } = insert.run(
        scope,
        entry.address,
        entry.reason,
        entry.source,
        entry.created_at,
      );
      const row = one.get(scope, entry.address);
      if (!row) throw new Error("suppression row vanished after its insert");
      return { row: toSuppressionRow(row), created: changes > 0 };
    },
    find(clientId, addresses) {
      return chunks(addresses).flatMap((part) =>
        findStatement(part.length)
          .all(clientId ?? NO_CLIENT, ...part)
          .map(toSuppressionRow),
      );
    },
    remove: (clientId, address) => remove.run(clientId ?? NO_CLIENT, address).changes > 0,
    list({ client_id, before, limit }) {
      const where: string[] = [];
      const values: Array<string | number> = [];
      if (client_id !== undefined) {
        where.push("client_id = ?");
        values.push(client_id ?? NO_CLIENT);
      }
      if (before !== undefined) {
        where.push("id < ?");
        values.push(before);
      }
      const clause = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
      return db
        .prepare<Array<string | number>, StoredRow>(
          `SELECT ${COLUMNS} FROM suppressions ${clause} ORDER BY id DESC LIMIT ?`,
        )
        .all(...values, limit)
        .map(toSuppressionRow);
    },
  };
}
