import { type Migration, sql } from "@rd/common/kysely";

// NOTE: a server's default charset may be latin1 and its default engine MyISAM (no
// transactions): every table states both.
const TABLE_OPTIONS = sql`engine=InnoDB default charset=utf8mb4 collate=utf8mb4_bin`;

/**
 * The shared schema's history, applied by Kysely's migrator (which takes a lock, so instances
 * booting together do not both run one). APPEND a migration to change it; never edit one.
 */
export const SHARED_MIGRATIONS: Record<string, Migration> = {
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
  "0008-webhooks-version": {
    async up(db) {
      // Raised with every change of the endpoints: instances keep which event types have a
      // subscriber in memory and read them again when it moves (shared-webhooks.ts).
      await db.schema
        .alterTable("relay_shared")
        .addColumn("webhooks_version", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
};
