import type { Database } from "better-sqlite3";

/** `estado` of a delivery (wire contract). */
export type QueueState = "queued" | "sending" | "sent" | "failed";
export const QUEUE_STATES: readonly QueueState[] = ["queued", "sending", "sent", "failed"];

/** One delivery (one recipient of one message) as `GET /queue` shows it. Times in epoch seconds. */
export interface QueueEntry {
  pk: number;
  message_id: string;
  /** The sending client; null for a `/send` on an open instance (no credential). */
  client_id: string | null;
  envelope_from: string;
  rcpt: string;
  estado: QueueState;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
}

/** The full row (schema: migration `queue`): the entry plus what the queue worker needs. */
export interface QueueRow extends QueueEntry {
  /** File name in the spool directory; null for synchronous deliveries (body kept in memory). */
  spool_file: string | null;
  updated_at: number;
  /** When the row reached `sent` or `failed` (retention counts from here). */
  finished_at: number | null;
}

export interface NewQueueEntry {
  message_id: string;
  client_id: string | null;
  envelope_from: string;
  rcpt: string;
  /** `sending` for a synchronous delivery starting now, `queued` for the asynchronous queue. */
  estado: "queued" | "sending";
  next_attempt_at: number;
  spool_file?: string | null;
}

/** All SQL on the `queue` table. Times are epoch seconds, given by the caller's clock. */
export interface QueueRepository {
  /** Inserts one row per entry in one transaction; returns their `pk`s in order. */
  insert(entries: readonly NewQueueEntry[], now: number): number[];
  get(pk: number): QueueRow | undefined;
  /** A delivery attempt is under way. */
  markSending(pk: number, now: number): void;
  /** An attempt failed temporarily and another follows; the row stays `sending`. */
  recordRetry(pk: number, change: { attempts: number; lastError: string; now: number }): void;
  markSent(pk: number, change: { attempts: number; now: number }): void;
  markFailed(pk: number, change: { attempts: number; lastError: string; now: number }): void;
}

export function createQueueRepository(db: Database): QueueRepository {
  const insertRow = db.prepare<[NewQueueEntry & { now: number; spool: string | null }], void>(`
    INSERT INTO queue (message_id, client_id, envelope_from, rcpt, estado, attempts,
                       next_attempt_at, spool_file, created_at, updated_at)
    VALUES (@message_id, @client_id, @envelope_from, @rcpt, @estado, 0,
            @next_attempt_at, @spool, @now, @now)
  `);
  const insertMany = db.transaction((entries: readonly NewQueueEntry[], now: number) =>
    entries.map((entry) =>
      Number(insertRow.run({ ...entry, now, spool: entry.spool_file ?? null }).lastInsertRowid),
    ),
  );
  const selectRow = db.prepare<[number], QueueRow>("SELECT * FROM queue WHERE pk = ?");
  const setSending = db.prepare<[{ pk: number; now: number }], void>(
    "UPDATE queue SET estado = 'sending', updated_at = @now WHERE pk = @pk",
  );
  const setRetry = db.prepare<
    [{ pk: number; attempts: number; lastError: string; now: number }],
    void
  >(
    "UPDATE queue SET attempts = @attempts, last_error = @lastError, updated_at = @now WHERE pk = @pk",
  );
  const setFinished = db.prepare<
    [{ pk: number; estado: QueueState; attempts: number; lastError: string | null; now: number }],
    void
  >(`
    UPDATE queue
       SET estado = @estado, attempts = @attempts, last_error = COALESCE(@lastError, last_error),
           updated_at = @now, finished_at = @now
     WHERE pk = @pk
  `);

  return {
    insert: (entries, now) => insertMany(entries, now),
    get: (pk) => selectRow.get(pk),
    markSending(pk, now) {
      setSending.run({ pk, now });
    },
    recordRetry(pk, { attempts, lastError, now }) {
      setRetry.run({ pk, attempts, lastError, now });
    },
    markSent(pk, { attempts, now }) {
      setFinished.run({ pk, estado: "sent", attempts, lastError: null, now });
    },
    markFailed(pk, { attempts, lastError, now }) {
      setFinished.run({ pk, estado: "failed", attempts, lastError, now });
    },
  };
}
