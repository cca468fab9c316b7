import {
  type Compilable,
  CompiledQuery,
  type Generated,
  Kysely,
  Migrator,
  MysqlDialect,
  type RawBuilder,
  sql,
} from "@rd/common/kysely";
import { SHARED_MIGRATIONS } from "./shared-migrations.js";

/**
 * The shared state of several relay instances (`RELAY_DATABASE_URL`, MariaDB 10.6+ or MySQL 8).
 * Booleans are 0/1, times epoch seconds or ISO 8601 text, as in the SQLite state database.
 */
export interface SharedSchema {
  /** One row (`id` 1): the shared settings document and the change counters instances poll. */
  relay_shared: {
    id: number;
    /** JSON: domains (key names, not paths), allowlist, rate limits; see shared-config-store.ts. */
    settings: string;
    settings_version: number;
    clients_version: number;
    /** Raised with every change of `relay_webhook_endpoints` (migration 0008, default 0). */
    webhooks_version: Generated<number>;
  };
  /** DKIM private keys by name (the key file's base name on the instance that made it). */
  relay_dkim_keys: { name: string; pem: string };
  relay_clients: {
    client_id: string;
    name: string;
    /** JSON array of domain names. */
    domains: string;
    active: number;
    secret_hash: string;
    created_at: string;
  };
  relay_quota_usage: {
    domain: string;
    period: string;
    window_start: number;
    recipients: number;
  };
  /** The queue of every instance: the SQLite `queue` table plus the claim's lease. */
  relay_queue: {
    pk: Generated<number>;
    message_id: string;
    client_id: string | null;
    envelope_from: string;
    rcpt: string;
    estado: string;
    attempts: number;
    next_attempt_at: number;
    last_error: string | null;
    /** The message body's row; null for synchronous deliveries (the body lived in the request). */
    body_id: number | null;
    created_at: number;
    updated_at: number;
    finished_at: number | null;
    /** While `sending`: when the claim lapses and another instance may take the entry. */
    lease_until: number | null;
    /** JSON {tags, metadata} of `/send`; NULL: none (state/queue-labels.ts). */
    labels: string | null;
  };
  /** Message bodies of queued mail, one per message (shared by its recipients' rows). */
  relay_queue_bodies: { id: Generated<number>; body: Buffer };
  /** Suppression lists (state/suppression-repository.ts); client_id '' = no client. */
  relay_suppressions: {
    id: Generated<number>;
    client_id: string;
    address: string;
    reason: string;
    source: string;
    created_at: string;
  };
  /** Idempotency keys of every instance: the SQLite `idempotency_keys` table. */
  relay_idempotency_keys: {
    scope: string;
    key: string;
    fingerprint: string;
    status: number | null;
    body: string | null;
    expires_at: number;
  };
  /** Webhook endpoints, outbox and attempts: the SQLite tables of migration `webhooks`. */
  relay_webhook_endpoints: {
    id: string;
    url: string;
    /** JSON array of event types. */
    events: string;
    secret: string;
    created_at: string;
  };
  relay_webhook_outbox: {
    pk: Generated<number>;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    body: string;
    attempts: number;
    next_attempt_at: number;
    expires_at: number;
    lease_until: number | null;
  };
  relay_webhook_attempts: {
    pk: Generated<number>;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    attempt: number;
    at: string;
    status: number | null;
    latency_ms: number;
    error: string | null;
    outcome: string;
  };
}

export type SharedDb = Kysely<SharedSchema>;

/** A change counter of `relay_shared`, which every instance reads at its refresh. */
export type ChangeCounter = "clients_version" | "webhooks_version";

/** Raises `counter` inside `trx`, the transaction of the change it announces. */
export async function raiseCounter(trx: SharedDb, counter: ChangeCounter): Promise<void> {
  await trx
    .updateTable("relay_shared")
    .set({ [counter]: sql<number>`${sql.ref(counter)} + 1` } as Record<
      ChangeCounter,
      RawBuilder<number>
    >)
    .where("id", "=", 1)
    .execute();
}

/** A transaction InnoDB chose as a deadlock victim (or whose lock wait timed out) is tried again. */
const RETRIES = 4;
/** mysql2's errno of ER_LOCK_DEADLOCK and ER_LOCK_WAIT_TIMEOUT. */
const RETRYABLE_ERRNOS = new Set([1213, 1205]);

/**
 * Runs `work` (one transaction), again when InnoDB rolled it back as a deadlock victim: under
 * concurrent claims, finishes and inserts on the queue's indexes that is expected, and the
 * documented answer is to retry the transaction.
 */
export async function retryingDeadlocks<T>(
  work: () => Promise<T>,
  /** More errnos that mean "try the transaction again" for this caller. */
  alsoRetried: readonly number[] = [],
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const errno = (error as { errno?: number }).errno;
      const retryable =
        errno !== undefined && (RETRYABLE_ERRNOS.has(errno) || alsoRetried.includes(errno));
      if (attempt >= RETRIES || !retryable) throw error;
    }
  }
}

/** What the server answered to one statement of `transactionInOneTrip`. */
export interface StatementResult {
  insertId: number;
  affectedRows: number;
}

/**
 * Runs `statements` as one transaction sent in one round trip (`START TRANSACTION; …; COMMIT`, the
 * connection's multi-statement mode): a transaction whose statements need nothing read inside it
 * costs one network turn instead of one per statement and two more for BEGIN and COMMIT. Values
 * stay bound parameters, escaped by mysql2 as for any query. The server stops at the first
 * statement that fails; the transaction is then rolled back and the error thrown.
 */
export async function transactionInOneTrip(
  db: SharedDb,
  statements: readonly Compilable[],
): Promise<StatementResult[]> {
  const compiled = statements.map((statement) => statement.compile());
  const text = ["START TRANSACTION", ...compiled.map((query) => query.sql), "COMMIT"].join(";\n");
  const parameters = compiled.flatMap((query) => query.parameters);
  return db.connection().execute(async (connection) => {
    try {
      const { rows } = await connection.executeQuery<StatementResult>(
        CompiledQuery.raw(text, parameters),
      );
      return rows.slice(1, -1).map(({ insertId, affectedRows }) => ({
        insertId: Number(insertId),
        affectedRows: Number(affectedRows),
      }));
    } catch (error) {
      await sql`ROLLBACK`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}

/** Connections per instance: the quota transactions of concurrent sends, the refresh, the API. */
const POOL_SIZE = 10;
/** A connection attempt longer than this counts as "database unreachable". */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Opens a pool on `url`, checks that the server answers and applies the pending migrations.
 * mysql2 is loaded here, so an embedded relay never loads it.
 */
export async function openSharedDatabase(url: string): Promise<SharedDb> {
  const { createPool } = await import("mysql2");
  const db = new Kysely<SharedSchema>({
    dialect: new MysqlDialect({
      pool: createPool({
        uri: url,
        connectionLimit: POOL_SIZE,
        connectTimeout: CONNECT_TIMEOUT_MS,
        timezone: "Z",
        charset: "utf8mb4_bin",
        // For `transactionInOneTrip`; every statement is built by Kysely with bound values.
        multipleStatements: true,
      }),
    }),
  });
  try {
    await sql`select 1`.execute(db);
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => SHARED_MIGRATIONS },
      migrationTableName: "relay_migrations",
      migrationLockTableName: "relay_migrations_lock",
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return db;
}
