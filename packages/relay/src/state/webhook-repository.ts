import type { Database } from "better-sqlite3";

// All SQL of the delivery-event webhooks (migration `webhooks`): endpoints, the outbox of
// events still to deliver, and each endpoint's recent attempts. Times are epoch milliseconds.

/** A registered endpoint, its secret included (the dispatcher signs with it; the API never shows it again). */
export interface WebhookEndpointRow {
  id: string;
  url: string;
  /** Event types it receives. */
  events: string[];
  secret: string;
  created_at: string;
}

/** One event waiting for one endpoint. `body` is the JSON signed and sent, fixed at emission. */
export interface WebhookOutboxRow {
  pk: number;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  body: string;
  attempts: number;
  /** After this the event is given up. */
  expires_at: number;
}

/** An event for every endpoint subscribed to its type. */
export interface NewWebhookEvent {
  event_id: string;
  event_type: string;
  body: string;
  now: number;
  expires_at: number;
}

export type WebhookAttemptOutcome = "delivered" | "retrying" | "gave_up";

/** One delivery attempt as `GET /webhooks` shows it. */
export interface WebhookAttemptRow {
  event_id: string;
  event_type: string;
  attempt: number;
  /** ISO 8601. */
  at: string;
  /** The HTTP status answered; null when none came (timeout, refused connection). */
  status: number | null;
  latency_ms: number;
  error: string | null;
  outcome: WebhookAttemptOutcome;
}

type Maybe<T> = T | Promise<T>;

/**
 * The webhooks' state as the service and the dispatcher use it: the SQLite repository below or
 * the shared database's (`shared/shared-webhooks.ts`), whose answers come later.
 */
export interface WebhookStore {
  addEndpoint(endpoint: WebhookEndpointRow): Maybe<void>;
  endpoints(): Maybe<WebhookEndpointRow[]>;
  /** False when there was no such endpoint. Its pending events and attempts go with it. */
  removeEndpoint(id: string): Maybe<boolean>;
  /** The newest first. */
  recentAttempts(endpointId: string): Maybe<WebhookAttemptRow[]>;
  /** Events of the endpoint still in the outbox. */
  pendingCount(endpointId: string): Maybe<number>;
  /**
   * Whether any endpoint takes events of this type: when none does, an event needs no body (nor
   * the queue rows its body reads). Answered without a round trip (the shared store keeps the
   * event types in memory), so `Ledger.emit` can ask it.
   */
  subscribed(eventType: string): boolean;
  /**
   * Writes one outbox row per endpoint subscribed to the event's type; returns how many. An
   * event already in an endpoint's outbox (same `event_id`) is not written twice.
   */
  enqueue(event: NewWebhookEvent): Maybe<number>;
  /**
   * Takes up to `limit` due rows of an endpoint (not leased by another sender) and leases them
   * until `leaseUntil`: a sender that dies leaves them due again once the lease lapses.
   */
  claimDue(
    endpointId: string,
    now: number,
    limit: number,
    leaseUntil: number,
  ): Maybe<WebhookOutboxRow[]>;
  /**
   * Records an attempt (keeping the newest `ATTEMPTS_KEPT` of the endpoint) and, when it ends
   * the event (`delivered`, `gave_up`), removes the row; else the row is due at `nextAttemptAt`.
   */
  settle(row: WebhookOutboxRow, attempt: WebhookAttemptRow, nextAttemptAt: number): Maybe<void>;
  /**
   * Boot: leases left by a previous process lapse at once where it was the only sender (the
   * SQLite database); the shared database keeps them (another instance may hold one).
   */
  releaseLeases(): Maybe<void>;
}

/** Attempts `GET /webhooks` keeps per endpoint. */
export const ATTEMPTS_KEPT = 20;

/** The SQLite store: synchronous, so `Ledger.emit` writes the outbox itself. */
export interface WebhookRepository extends WebhookStore {
  enqueue(event: NewWebhookEvent): number;
}

export function createWebhookRepository(db: Database): WebhookRepository {
  const insertEndpoint = db.prepare<[Record<string, string>], void>(
    `INSERT INTO webhook_endpoints (id, url, events, secret, created_at)
     VALUES (:id, :url, :events, :secret, :created_at)`,
  );
  const selectEndpoints = db.prepare<[], Omit<WebhookEndpointRow, "events"> & { events: string }>(
    "SELECT id, url, events, secret, created_at FROM webhook_endpoints ORDER BY created_at, id",
  );
  const deleteEndpoint = db.prepare<[string], void>("DELETE FROM webhook_endpoints WHERE id = ?");
  const selectAttempts = db.prepare<[string, number], WebhookAttemptRow>(
    `SELECT event_id, event_type, attempt, at, status, latency_ms, error, outcome
       FROM webhook_attempts WHERE endpoint_id = ? ORDER BY pk DESC LIMIT ?`,
  );
  const countPending = db
    .prepare<[string], number>("SELECT count(*) FROM webhook_outbox WHERE endpoint_id = ?")
    .pluck();
  // NOTE: `events` is a JSON array; json_each finds the subscribers inside SQLite, in the
  // same statement as the insert (one row per endpoint, atomically).
  const insertEvent = db.prepare<[NewWebhookEvent], void>(
    `INSERT OR IGNORE INTO webhook_outbox
       (endpoint_id, event_id, event_type, body, attempts, next_attempt_at, expires_at)
     SELECT e.id, :event_id, :event_type, :body, 0, :now, :expires_at
       FROM webhook_endpoints e
      WHERE EXISTS (SELECT 1 FROM json_each(e.events) WHERE value = :event_type)`,
  );
  const selectDue = db.prepare<[string, number, number, number], WebhookOutboxRow>(
    `SELECT pk, endpoint_id, event_id, event_type, body, attempts, expires_at
       FROM webhook_outbox
      WHERE endpoint_id = ? AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
      ORDER BY next_attempt_at, pk LIMIT ?`,
  );
  const lease = db.prepare<[number, number], void>(
    "UPDATE webhook_outbox SET lease_until = ? WHERE pk = ?",
  );
  const claim = db.transaction(
    (endpointId: string, now: number, limit: number, leaseUntil: number) => {
      const rows = selectDue.all(endpointId, now, now, limit);
      for (const row of rows) lease.run(leaseUntil, row.pk);
      return rows;
    },
  );
  // An endpoint removed while its request was in flight records nothing (its rows went with it).
  const insertAttempt = db.prepare<[Record<string, unknown>], void>(
    `INSERT INTO webhook_attempts
       (endpoint_id, event_id, event_type, attempt, at, status, latency_ms, error, outcome)
     SELECT :endpoint_id, :event_id, :event_type, :attempt, :at, :status, :latency_ms, :error,
            :outcome
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = :endpoint_id)`,
  );
  const trimAttempts = db.prepare<[string, string, number], void>(
    `DELETE FROM webhook_attempts WHERE endpoint_id = ? AND pk NOT IN
       (SELECT pk FROM webhook_attempts WHERE endpoint_id = ? ORDER BY pk DESC LIMIT ?)`,
  );
  const deleteRow = db.prepare<[number], void>("DELETE FROM webhook_outbox WHERE pk = ?");
  const reschedule = db.prepare<[number, number, number], void>(
    "UPDATE webhook_outbox SET attempts = ?, next_attempt_at = ?, lease_until = NULL WHERE pk = ?",
  );
  const settle = db.transaction(
    (row: WebhookOutboxRow, attempt: WebhookAttemptRow, nextAttemptAt: number) => {
      insertAttempt.run({ ...attempt, endpoint_id: row.endpoint_id });
      trimAttempts.run(row.endpoint_id, row.endpoint_id, ATTEMPTS_KEPT);
      if (attempt.outcome === "retrying") reschedule.run(attempt.attempt, nextAttemptAt, row.pk);
      else deleteRow.run(row.pk);
    },
  );
  const clearLeases = db.prepare<[], void>(
    "UPDATE webhook_outbox SET lease_until = NULL WHERE lease_until IS NOT NULL",
  );

  const endpoints = () =>
    selectEndpoints.all().map((row) => ({ ...row, events: JSON.parse(row.events) as string[] }));
  // The event types some endpoint takes, read again after this repository changes the
  // endpoints (only the relay's own process writes its database): `subscribed` is asked for
  // every ledger event, and a query each time cost some 1% of the relay's CPU under load.
  let types: ReadonlySet<string> | undefined;

  return {
    addEndpoint(endpoint) {
      insertEndpoint.run({ ...endpoint, events: JSON.stringify(endpoint.events) });
      types = undefined;
    },
    endpoints,
    removeEndpoint(id) {
      types = undefined;
      return deleteEndpoint.run(id).changes > 0;
    },
    recentAttempts(endpointId) {
      return selectAttempts.all(endpointId, ATTEMPTS_KEPT);
    },
    pendingCount(endpointId) {
      return countPending.get(endpointId) ?? 0;
    },
    subscribed(eventType) {
      types ??= new Set(endpoints().flatMap((endpoint) => endpoint.events));
      return types.has(eventType);
    },
    enqueue(event) {
      return insertEvent.run(event).changes;
    },
    claimDue(endpointId, now, limit, leaseUntil) {
      return claim(endpointId, now, limit, leaseUntil);
    },
    settle(row, attempt, nextAttemptAt) {
      settle(row, attempt, nextAttemptAt);
    },
    releaseLeases() {
      clearLeases.run();
    },
  };
}

/** A ledger event kept until it is in the shared outbox. */
export interface WebhookJournalRow {
  pk: number;
  event_id: string;
  /** Epoch ms of the event. */
  at: number;
  /** The ledger event's JSON, with its message's labels when the emitter knew them. */
  event: string;
}

/**
 * The local journal of a relay on the shared database: `Ledger.emit` cannot wait for MySQL, so
 * it writes the event here (SQLite, synchronous, durable) and a forwarder moves it to the
 * shared outbox; what a crash left here is forwarded after the restart.
 */
export interface WebhookJournal {
  add(row: Omit<WebhookJournalRow, "pk">): void;
  /** The oldest first. */
  pending(limit: number): WebhookJournalRow[];
  /** Removes these rows, in one transaction. */
  remove(pks: readonly number[]): void;
}

export function createWebhookJournal(db: Database): WebhookJournal {
  const insert = db.prepare<[Omit<WebhookJournalRow, "pk">], void>(
    "INSERT INTO webhook_journal (event_id, at, event) VALUES (:event_id, :at, :event)",
  );
  const select = db.prepare<[number], WebhookJournalRow>(
    "SELECT pk, event_id, at, event FROM webhook_journal ORDER BY pk LIMIT ?",
  );
  const remove = db.prepare<[number], void>("DELETE FROM webhook_journal WHERE pk = ?");
  const removeAll = db.transaction((pks: readonly number[]) => {
    for (const pk of pks) remove.run(pk);
  });
  return {
    add(row) {
      insert.run(row);
    },
    pending(limit) {
      return select.all(limit);
    },
    remove(pks) {
      removeAll(pks);
    },
  };
}
