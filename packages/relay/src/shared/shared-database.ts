import { type Generated, Kysely, type Migration, Migrator, MysqlDialect, sql } from "kysely";

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

/** A transaction InnoDB chose as a deadlock victim (or whose lock wait timed out) is tried again. */
const RETRIES = 4;
/** mysql2's errno of ER_LOCK_DEADLOCK and ER_LOCK_WAIT_TIMEOUT. */
const RETRYABLE_ERRNOS = new Set([1213, 1205]);

/**
 * Runs `work` (one transaction), again when InnoDB rolled it back as a deadlock victim: under
 * concurrent claims, finishes and inserts on the queue's indexes that is expected, and the
 * documented answer is to retry the transaction.
 */
export async function retryingDeadlocks<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const errno = (error as { errno?: number }).errno;
      if (attempt >= RETRIES || errno === undefined || !RETRYABLE_ERRNOS.has(errno)) throw error;
    }
  }
}

/** Connections per instance: the quota transactions of concurrent sends, the refresh, the API. */
const POOL_SIZE = 10;
/** A connection attempt longer than this counts as "database unreachable". */
const CONNECT_TIMEOUT_MS = 5_000;

// NOTE: a server's default charset may be latin1 and its default engine MyISAM (no
// transactions): every table states both.
const TABLE_OPTIONS = sql`engine=InnoDB default charset=utf8mb4 collate=utf8mb4_bin`;

/**
 * The shared schema's history, applied by Kysely's migrator (which takes a lock, so instances
 * booting together do not both run one). APPEND a migration to change it; never edit one.
 */
const MIGRATIONS: Record<string, Migration> = {
  "0001-shared-state": {
    async up(db) {
      await db.schema
        .createTable("relay_shared")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("settings", sql`mediumtext`, (c) => c.notNull())
        .addColumn("settings_version", "bigint", (c) => c.notNull())
        .addColumn("clients_version", "bigint", (c) => c.notNull())
        .modifyEnd(TABLE_OPTIONS)
        .execute();
      await db.schema
        .createTable("relay_dkim_keys")
        .addColumn("name", "varchar(255)", (c) => c.primaryKey())
        .addColumn("pem", "text", (c) => c.notNull())
        .modifyEnd(TABLE_OPTIONS)
        .execute();
      await db.schema
        .createTable("relay_clients")
        .addColumn("client_id", "varchar(32)", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("domains", "text", (c) => c.notNull())
        .addColumn("active", "integer", (c) => c.notNull())
        .addColumn("secret_hash", "varchar(100)", (c) => c.notNull())
        .addColumn("created_at", "varchar(32)", (c) => c.notNull())
        .modifyEnd(TABLE_OPTIONS)
        .execute();
      await db.schema
        .createTable("relay_quota_usage")
        .addColumn("domain", "varchar(253)", (c) => c.notNull())
        .addColumn("period", "varchar(8)", (c) => c.notNull())
        .addColumn("window_start", "bigint", (c) => c.notNull())
        .addColumn("recipients", "integer", (c) => c.notNull())
        .addPrimaryKeyConstraint("relay_quota_usage_pk", ["domain", "period", "window_start"])
        .modifyEnd(TABLE_OPTIONS)
        .execute();
    },
  },
  "0002-shared-queue": {
    async up(db) {
      await db.schema
        .createTable("relay_queue_bodies")
        .addColumn("id", "bigint", (c) => c.primaryKey().autoIncrement())
        // NOTE: up to 5 MiB each (the queue's limit); MariaDB's default max_allowed_packet is 16 MiB.
        .addColumn("body", sql`longblob`, (c) => c.notNull())
        .modifyEnd(TABLE_OPTIONS)
        .execute();
      await db.schema
        .createTable("relay_queue")
        .addColumn("pk", "bigint", (c) => c.primaryKey().autoIncrement())
        .addColumn("message_id", "varchar(998)", (c) => c.notNull())
        .addColumn("client_id", "varchar(32)")
        .addColumn("envelope_from", "varchar(512)", (c) => c.notNull())
        .addColumn("rcpt", "varchar(512)", (c) => c.notNull())
        .addColumn("estado", "varchar(8)", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
        .addColumn("last_error", "text")
        .addColumn("body_id", "bigint")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addColumn("finished_at", "bigint")
        .addColumn("lease_until", "bigint")
        .modifyEnd(TABLE_OPTIONS)
        .execute();
      await db.schema
        .createIndex("relay_queue_due")
        .on("relay_queue")
        .columns(["estado", "next_attempt_at"])
        .execute();
      await db.schema
        .createIndex("relay_queue_message")
        .on("relay_queue")
        .expression(sql`message_id(191)`)
        .execute();
      await db.schema
        .createIndex("relay_queue_client")
        .on("relay_queue")
        .column("client_id")
        .execute();
      await db.schema.createIndex("relay_queue_body").on("relay_queue").column("body_id").execute();
      await db.schema
        .createIndex("relay_queue_finished")
        .on("relay_queue")
        .column("finished_at")
        .execute();
    },
  },
  "0003-queue-labels": {
    async up(db) {
      await db.schema.alterTable("relay_queue").addColumn("labels", "text").execute();
    },
  },
  "0005-idempotency-keys": {
    async up(db) {
      await db.schema
        .createTable("relay_idempotency_keys")
        .addColumn("scope", "varchar(32)", (c) => c.notNull())
        .addColumn("key", "varchar(255)", (c) => c.notNull())
        .addColumn("fingerprint", "char(64)", (c) => c.notNull())
        .addColumn("status", "integer")
        .addColumn("body", sql`mediumtext`)
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("relay_idempotency_keys_pk", ["scope", "key"])
        .modifyEnd(TABLE_OPTIONS)
        .execute();
      await db.schema
        .createIndex("relay_idempotency_keys_expiry")
        .on("relay_idempotency_keys")
        .column("expires_at")
        .execute();
    },
  },
  "0006-suppressions": {
    async up(db) {
      await db.schema
        .createTable("relay_suppressions")
        .addColumn("id", "bigint", (c) => c.primaryKey().autoIncrement())
        .addColumn("client_id", "varchar(32)", (c) => c.notNull())
        .addColumn("address", "varchar(254)", (c) => c.notNull())
        .addColumn("reason", "text", (c) => c.notNull())
        .addColumn("source", "varchar(8)", (c) => c.notNull())
        .addColumn("created_at", "varchar(32)", (c) => c.notNull())
        .addUniqueConstraint("relay_suppressions_address", ["client_id", "address"])
        .modifyEnd(TABLE_OPTIONS)
        .execute();
    },
  },
  "0007-webhooks": {
    async up(db) {
      await db.schema
        .createTable("relay_webhook_endpoints")
        .addColumn("id", "varchar(32)", (c) => c.primaryKey())
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("events", "text", (c) => c.notNull())
        .addColumn("secret", "varchar(64)", (c) => c.notNull())
        .addColumn("created_at", "varchar(32)", (c) => c.notNull())
        .modifyEnd(TABLE_OPTIONS)
        .execute();
      await db.schema
        .createTable("relay_webhook_outbox")
        .addColumn("pk", "bigint", (c) => c.primaryKey().autoIncrement())
        .addColumn("endpoint_id", "varchar(32)", (c) => c.notNull())
        .addColumn("event_id", "varchar(32)", (c) => c.notNull())
        .addColumn("event_type", "varchar(16)", (c) => c.notNull())
        .addColumn("body", sql`mediumtext`, (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull())
        .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .addColumn("lease_until", "bigint")
        .addUniqueConstraint("relay_webhook_outbox_event", ["endpoint_id", "event_id"])
        .addForeignKeyConstraint(
          "relay_webhook_outbox_endpoint",
          ["endpoint_id"],
          "relay_webhook_endpoints",
          ["id"],
          (c) => c.onDelete("cascade"),
        )
        .modifyEnd(TABLE_OPTIONS)
        .execute();
      await db.schema
        .createIndex("relay_webhook_outbox_due")
        .on("relay_webhook_outbox")
        .columns(["endpoint_id", "next_attempt_at"])
        .execute();
      await db.schema
        .createTable("relay_webhook_attempts")
        .addColumn("pk", "bigint", (c) => c.primaryKey().autoIncrement())
        .addColumn("endpoint_id", "varchar(32)", (c) => c.notNull())
        .addColumn("event_id", "varchar(32)", (c) => c.notNull())
        .addColumn("event_type", "varchar(16)", (c) => c.notNull())
        .addColumn("attempt", "integer", (c) => c.notNull())
        .addColumn("at", "varchar(32)", (c) => c.notNull())
        .addColumn("status", "integer")
        .addColumn("latency_ms", "integer", (c) => c.notNull())
        .addColumn("error", "text")
        .addColumn("outcome", "varchar(16)", (c) => c.notNull())
        .addForeignKeyConstraint(
          "relay_webhook_attempts_endpoint",
          ["endpoint_id"],
          "relay_webhook_endpoints",
          ["id"],
          (c) => c.onDelete("cascade"),
        )
        .modifyEnd(TABLE_OPTIONS)
        .execute();
      await db.schema
        .createIndex("relay_webhook_attempts_endpoint")
        .on("relay_webhook_attempts")
        .columns(["endpoint_id", "pk"])
        .execute();
    },
  },
};

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
      }),
    }),
  });
  try {
    await sql`select 1`.execute(db);
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => MIGRATIONS },
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
