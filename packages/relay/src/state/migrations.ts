import type { Database } from "better-sqlite3";

/**
 * The state database's schema history, oldest first. The database records how many have run in
 * `PRAGMA user_version`; at boot the missing ones run in order, each in its own transaction.
 * To change the schema, APPEND a migration (never edit one that has shipped).
 */
export interface Migration {
  readonly name: string;
  readonly up: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    name: "clients",
    up: `
      CREATE TABLE clients (
        client_id   TEXT PRIMARY KEY,
        name        TEXT NOT NULL,
        domains     TEXT NOT NULL,          -- JSON array of domain names
        active      INTEGER NOT NULL CHECK (active IN (0, 1)),
        secret_hash TEXT NOT NULL,          -- bcrypt
        created_at  TEXT NOT NULL           -- ISO 8601 UTC
      ) STRICT;
    `,
  },
  {
    // Recipients accepted per sender domain in fixed UTC windows (see quota-repository.ts).
    name: "quota_usage",
    up: `
      CREATE TABLE quota_usage (
        domain       TEXT NOT NULL,
        period       TEXT NOT NULL CHECK (period IN ('per_hour', 'per_day')),
        window_start INTEGER NOT NULL,     -- epoch seconds, start of the UTC hour or day
        recipients   INTEGER NOT NULL,
        PRIMARY KEY (domain, period, window_start)
      ) STRICT;
    `,
  },
  {
    // One row per recipient of every delivery, synchronous ones included (queue-repository.ts).
    // The indexes serve the queue worker (due rows), GET /queue filters and retention.
    name: "queue",
    up: `
      CREATE TABLE queue (
        pk              INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id      TEXT NOT NULL,     -- angle-bracketed Message-ID
        client_id       TEXT,              -- NULL: /send on an open instance
        envelope_from   TEXT NOT NULL,
        rcpt            TEXT NOT NULL,     -- one row per recipient
        estado          TEXT NOT NULL CHECK (estado IN ('queued', 'sending', 'sent', 'failed')),
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,  -- epoch seconds
        last_error      TEXT,
        spool_file      TEXT,              -- file name in the spool; NULL for synchronous deliveries
        created_at      INTEGER NOT NULL,  -- epoch seconds
        updated_at      INTEGER NOT NULL,
        finished_at     INTEGER            -- set on sent/failed; retention counts from here
      ) STRICT;
      CREATE INDEX queue_due ON queue (estado, next_attempt_at);
      CREATE INDEX queue_message ON queue (message_id);
      CREATE INDEX queue_client ON queue (client_id);
      CREATE INDEX queue_finished ON queue (finished_at) WHERE finished_at IS NOT NULL;
    `,
  },
  {
    // A message's /send tags and metadata with each of its rows (state/queue-labels.ts).
    name: "queue_labels",
    up: `ALTER TABLE queue ADD COLUMN labels TEXT; -- JSON {tags, metadata}; NULL: none`,
  },
  {
    // Delivery-event webhooks (state/webhook-repository.ts): endpoints, the durable outbox of
    // events still to deliver (one row per endpoint), and the recent attempts of each endpoint.
    name: "webhooks",
    up: `
      CREATE TABLE webhook_endpoints (
        id         TEXT PRIMARY KEY,
        url        TEXT NOT NULL,
        events     TEXT NOT NULL,          -- JSON array of event types
        secret     TEXT NOT NULL,          -- HMAC key: kept usable, never shown again
        created_at TEXT NOT NULL           -- ISO 8601 UTC
      ) STRICT;
      CREATE TABLE webhook_outbox (
        pk              INTEGER PRIMARY KEY AUTOINCREMENT,
        endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_id        TEXT NOT NULL,
        event_type      TEXT NOT NULL,
        body            TEXT NOT NULL,     -- the JSON signed and sent, fixed at emission
        attempts        INTEGER NOT NULL,
        next_attempt_at INTEGER NOT NULL,  -- epoch ms
        expires_at      INTEGER NOT NULL,  -- epoch ms: given up after
        lease_until     INTEGER            -- epoch ms: a sender holds it until then
      ) STRICT;
      CREATE INDEX webhook_outbox_due ON webhook_outbox (endpoint_id, next_attempt_at);
      CREATE TABLE webhook_attempts (
        pk          INTEGER PRIMARY KEY AUTOINCREMENT,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_id    TEXT NOT NULL,
        event_type  TEXT NOT NULL,
        attempt     INTEGER NOT NULL,
        at          TEXT NOT NULL,         -- ISO 8601 UTC
        status      INTEGER,               -- HTTP status; NULL: no answer
        latency_ms  INTEGER NOT NULL,
        error       TEXT,
        outcome     TEXT NOT NULL CHECK (outcome IN ('delivered', 'retrying', 'gave_up'))
      ) STRICT;
      CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, pk);
    `,
  },
  {
    // Idempotency-Key of /send and /send-raw (state/idempotency-repository.ts): the first
    // answer per client and key, replayed for 24 h.
    name: "idempotency_keys",
    up: `
      CREATE TABLE idempotency_keys (
        scope       TEXT NOT NULL,       -- client_id; '' for /send on an open instance
        key         TEXT NOT NULL,
        fingerprint TEXT NOT NULL,       -- SHA-256 (hex) of the route and the raw body
        status      INTEGER,             -- NULL while the first request runs
        body        TEXT,                -- the first answer's JSON
        expires_at  INTEGER NOT NULL,    -- epoch seconds
        PRIMARY KEY (scope, key)
      ) STRICT;
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `,
  },
  {
    // Suppression lists (state/suppression-repository.ts): per client, the addresses it no
    // longer sends to. client_id '' is the open instance's /send (no client).
    name: "suppressions",
    up: `
      CREATE TABLE suppressions (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        client_id  TEXT NOT NULL,
        address    TEXT NOT NULL,         -- lower case
        reason     TEXT NOT NULL,
        source     TEXT NOT NULL CHECK (source IN ('bounce', 'manual')),
        created_at TEXT NOT NULL,         -- ISO 8601 UTC
        UNIQUE (client_id, address)
      ) STRICT;
    `,
  },
  {
    // The local journal of webhook events on the shared database (state/webhook-repository.ts):
    // each waits here until it is in the shared outbox.
    name: "webhook_journal",
    up: `
      CREATE TABLE webhook_journal (
        pk       INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL,
        at       INTEGER NOT NULL,     -- epoch ms of the event
        event    TEXT NOT NULL         -- the ledger event's JSON
      ) STRICT;
      CREATE UNIQUE INDEX webhook_outbox_event ON webhook_outbox (endpoint_id, event_id);
    `,
  },
];

/** Runs the migrations `db` has not seen yet; refuses a database newer than this code. */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(
      `state database is at schema version ${current}, newer than this relay (${migrations.length})`,
    );
  }
  for (const [index, migration] of migrations.entries()) {
    if (index < current) continue;
    db.transaction(() => {
      db.exec(migration.up);
      // NOTE: PRAGMA does not take bound parameters; the value is our own integer.
      db.pragma(`user_version = ${index + 1}`);
    })();
  }
}
