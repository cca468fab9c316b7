import { syncToDisk } from "@rd/common";
import type { Database } from "better-sqlite3";
import { QUEUE_STATES, type QueueEntry, type QueueState } from "./queue-entry.js";
import {
  decodeLabels,
  encodeLabels,
  type MessageLabels,
  type MessageOwnership,
} from "./queue-labels.js";

/** The full row (schema: migration `queue`): the entry plus what the queue worker needs. */
export interface QueueRow extends QueueEntry {
  /** File name in the spool directory; null for synchronous deliveries (body kept in memory). */
  spool_file: string | null;
  updated_at: number;
  /** When the row reached `sent` or `failed` (retention counts from here). */
  finished_at: number | null;
  /** The message, when the store keeps bodies itself (the shared database) rather than the spool. */
  body?: Buffer;
  /** The message's `/send` tags and metadata (empty when none). */
  labels: MessageLabels;
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
  /** The message, for a store that keeps bodies itself (the shared database); one per group. */
  body?: Buffer;
  /** The message's `/send` tags and metadata; absent: none. */
  labels?: Partial<MessageLabels>;
}

type Maybe<T> = T | Promise<T>;

/**
 * The queue as the outbound delivery, the queue worker, the intake and the API use it: the
 * SQLite repository below (synchronous) or the shared database's (`shared/shared-queue.ts`),
 * whose answers come later. Its users await every call.
 */
export interface QueueStore {
  insert(entries: readonly NewQueueEntry[], now: number): Maybe<number[]>;
  recordRetry(
    pk: number,
    change: { attempts: number; lastError: string; now: number },
  ): Maybe<void>;
  markSent(pk: number, change: { attempts: number; now: number }): Maybe<void>;
  markFailed(pk: number, change: { attempts: number; lastError: string; now: number }): Maybe<void>;
  insertGroups(
    groups: ReadonlyArray<{ entries: readonly NewQueueEntry[]; now: number }>,
  ): Maybe<number[][]>;
  syncCommitted(): Promise<void>;
  duePks(now: number): Maybe<number[]>;
  claim(pk: number, now: number): Maybe<QueueRow | undefined>;
  reschedule(
    pk: number,
    change: { attempts: number; lastError: string; nextAttemptAt: number; now: number },
  ): Maybe<void>;
  list(filters: QueueFilters): Maybe<QueueEntry[]>;
  deleteFinishedBefore(cutoff: number): Maybe<number>;
  countByState(): Maybe<Record<QueueState, number>>;
  labelsOf(messageId: string): Maybe<MessageOwnership | undefined>;
  messageRows(messageId: string): Maybe<QueueRow[]>;
}

/** All SQL on the `queue` table. Times are epoch seconds, given by the caller's clock. */
export interface QueueRepository {
  /** Inserts one row per entry in one transaction; returns their `pk`s in order. */
  insert(entries: readonly NewQueueEntry[], now: number): number[];
  /** An attempt failed temporarily and another follows; the row stays `sending`. */
  recordRetry(pk: number, change: { attempts: number; lastError: string; now: number }): void;
  markSent(pk: number, change: { attempts: number; now: number }): void;
  markFailed(pk: number, change: { attempts: number; lastError: string; now: number }): void;
  /** `markSent` and `markFailed` of several rows in one transaction (`queue-finishes.ts`). */
  markFinished(rows: readonly FinishedRow[]): void;

  // --- The asynchronous queue (src/queue/) ---

  /**
   * `insert` for mail accepted into the queue, several messages at once (group commit): one
   * transaction, one list of `pk`s per group. The commit is in the WAL but not yet on disk:
   * `syncCommitted` must resolve before any sender is answered.
   */
  insertGroups(
    groups: ReadonlyArray<{ entries: readonly NewQueueEntry[]; now: number }>,
  ): number[][];
  /**
   * Puts every commit made so far on disk (fdatasync of the WAL file, in the thread pool): what
   * `synchronous = FULL` does at each commit, done once for a whole group and without blocking
   * the event loop, so a 202 survives a power loss, not only a crash.
   */
  syncCommitted(): Promise<void>;

  /** `pk`s of the due rows (`queued`, `next_attempt_at <= now`), oldest first. */
  duePks(now: number): number[];
  /** Takes a due row for an attempt (`queued → sending`); undefined when it is not `queued`. */
  claim(pk: number, now: number): QueueRow | undefined;
  /** A queue attempt failed and another follows: back to `queued`, due at `nextAttemptAt`. */
  reschedule(
    pk: number,
    change: { attempts: number; lastError: string; nextAttemptAt: number; now: number },
  ): void;
  /** `GET /queue`: the filters combine with AND; newest first. */
  list(filters: QueueFilters): QueueEntry[];
  /** Retention: deletes the `sent`/`failed` rows finished before `cutoff`; returns how many. */
  deleteFinishedBefore(cutoff: number): number;
  /** How many rows are in each `estado` (every state named, 0 included): metrics, readiness. */
  countByState(): Record<QueueState, number>;
  /**
   * The sending client and the `/send` tags and metadata of `messageId` (angle-bracketed), read
   * from any of its rows; undefined when it has none (unknown, or past retention).
   */
  labelsOf(messageId: string): MessageOwnership | undefined;
  /** Every row of `messageId` (angle-bracketed), one per recipient, in insertion order. */
  messageRows(messageId: string): QueueRow[];
  /** Rows still to deliver (`queued`, `sending`) and the spool file each needs. */
  pendingSpoolFiles(): Array<{ pk: number; spool_file: string | null }>;
  /**
   * Boot recovery, in one transaction: the `lost` rows become `failed` with `lastError`, then
   * every row left `sending` (interrupted by a crash) becomes `queued`, due at `now`.
   */
  recover(change: { lost: readonly number[]; lastError: string; now: number }): {
    failed: number;
    requeued: number;
  };
}

/** A row's last attempt: `sent`, or `failed` with its error. */
export interface FinishedRow {
  pk: number;
  estado: "sent" | "failed";
  attempts: number;
  /** null keeps the row's last error (`sent`). */
  lastError: string | null;
  now: number;
}

/** The update of `markSent`: the row's last temporary error, if any, is kept. */
export const sentRow = (pk: number, change: { attempts: number; now: number }): FinishedRow => ({
  pk,
  estado: "sent",
  attempts: change.attempts,
  lastError: null,
  now: change.now,
});

/** The update of `markFailed`. */
export const failedRow = (
  pk: number,
  change: { attempts: number; lastError: string; now: number },
): FinishedRow => ({
  pk,
  estado: "failed",
  attempts: change.attempts,
  lastError: change.lastError,
  now: change.now,
});

/** `GET /queue` filters; absent ones do not filter. */
export interface QueueFilters {
  estado?: QueueState;
  /** Partial match on the recipient (case-insensitive for ASCII, as SQLite's LIKE). */
  rcpt?: string;
  message_id?: string;
  client_id?: string;
  limit: number;
}

const ENTRY_COLUMNS =
  "pk, message_id, client_id, envelope_from, rcpt, estado, attempts, next_attempt_at, last_error, created_at";

/** `text` as a LIKE pattern matching it anywhere, its own `%`, `_` and backslash taken literally. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** A row as SQLite holds it: `labels` is the JSON text. */
type StoredRow = Omit<QueueRow, "labels"> & { labels: string | null };

const decodeRow = (row: StoredRow): QueueRow => ({ ...row, labels: decodeLabels(row.labels) });

export function createQueueRepository(db: Database): QueueRepository {
  const insertRow = db.prepare<
    [Omit<NewQueueEntry, "labels"> & { now: number; spool: string | null; labels: string | null }],
    void
  >(`
    INSERT INTO queue (message_id, client_id, envelope_from, rcpt, estado, attempts,
                       next_attempt_at, spool_file, created_at, updated_at, labels)
    VALUES (@message_id, @client_id, @envelope_from, @rcpt, @estado, 0,
            @next_attempt_at, @spool, @now, @now, @labels)
  `);
  const insertMany = db.transaction((entries: readonly NewQueueEntry[], now: number) =>
    entries.map((entry) =>
      Number(
        insertRow.run({
          ...entry,
          now,
          spool: entry.spool_file ?? null,
          labels: encodeLabels(entry.labels),
        }).lastInsertRowid,
      ),
    ),
  );
  const insertGroups = db.transaction(
    (groups: ReadonlyArray<{ entries: readonly NewQueueEntry[]; now: number }>) =>
      groups.map(({ entries, now }) => insertMany(entries, now)),
  );
  const setRetry = db.prepare<
    [{ pk: number; attempts: number; lastError: string; now: number }],
    void
  >(
    "UPDATE queue SET attempts = @attempts, last_error = @lastError, updated_at = @now WHERE pk = @pk",
  );
  const setFinished = db.prepare<[FinishedRow], void>(`
    UPDATE queue
       SET estado = @estado, attempts = @attempts, last_error = COALESCE(@lastError, last_error),
           updated_at = @now, finished_at = @now
     WHERE pk = @pk
  `);

  const finishMany = db.transaction((rows: readonly FinishedRow[]) => {
    for (const row of rows) setFinished.run(row);
  });

  const selectDue = db
    .prepare<[number], number>(
      "SELECT pk FROM queue WHERE estado = 'queued' AND next_attempt_at <= ? ORDER BY created_at, pk",
    )
    .pluck();
  const claimRow = db.prepare<[{ pk: number; now: number }], StoredRow>(`
    UPDATE queue SET estado = 'sending', updated_at = @now
     WHERE pk = @pk AND estado = 'queued'
    RETURNING *
  `);
  const setRescheduled = db.prepare<
    [{ pk: number; attempts: number; lastError: string; nextAttemptAt: number; now: number }],
    void
  >(`
    UPDATE queue
       SET estado = 'queued', attempts = @attempts, last_error = @lastError,
           next_attempt_at = @nextAttemptAt, updated_at = @now
     WHERE pk = @pk
  `);
  const selectMessage = db.prepare<[string], StoredRow>(
    "SELECT * FROM queue WHERE message_id = ? ORDER BY pk",
  );
  const selectLabels = db.prepare<[string], { client_id: string | null; labels: string | null }>(
    "SELECT client_id, labels FROM queue WHERE message_id = ? LIMIT 1",
  );
  const deleteFinished = db.prepare<[number], void>(
    "DELETE FROM queue WHERE finished_at IS NOT NULL AND finished_at < ?",
  );
  const selectCounts = db.prepare<[], { estado: QueueState; count: number }>(
    "SELECT estado, COUNT(*) AS count FROM queue GROUP BY estado",
  );
  const selectPending = db.prepare<[], { pk: number; spool_file: string | null }>(
    "SELECT pk, spool_file FROM queue WHERE estado IN ('queued', 'sending')",
  );
  const setLost = db.prepare<[{ pk: number; lastError: string; now: number }], void>(`
    UPDATE queue SET estado = 'failed', last_error = @lastError, updated_at = @now, finished_at = @now
     WHERE pk = @pk AND estado IN ('queued', 'sending')
  `);
  const setRequeued = db.prepare<[{ now: number }], void>(
    "UPDATE queue SET estado = 'queued', next_attempt_at = @now, updated_at = @now WHERE estado = 'sending'",
  );
  const recoverAll = db.transaction(
    ({ lost, lastError, now }: { lost: readonly number[]; lastError: string; now: number }) => {
      let failed = 0;
      for (const pk of lost) failed += setLost.run({ pk, lastError, now }).changes;
      return { failed, requeued: setRequeued.run({ now }).changes };
    },
  );
  // One prepared statement per combination of filters present (at most 16), built from fixed
  // fragments: the values are always bound, never spliced in.
  const listStatements = new Map<string, ReturnType<typeof db.prepare>>();
  const listStatement = (filters: QueueFilters) => {
    const clauses: string[] = [];
    if (filters.estado !== undefined) clauses.push("estado = @estado");
    if (filters.rcpt !== undefined) clauses.push("rcpt LIKE @rcpt ESCAPE '\\'");
    if (filters.message_id !== undefined) clauses.push("message_id = @message_id");
    if (filters.client_id !== undefined) clauses.push("client_id = @client_id");
    const where = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
    let statement = listStatements.get(where);
    if (!statement) {
      // Newest first: pk follows insertion order.
      statement = db.prepare(
        `SELECT ${ENTRY_COLUMNS} FROM queue ${where} ORDER BY pk DESC LIMIT @limit`,
      );
      listStatements.set(where, statement);
    }
    return statement;
  };

  return {
    duePks: (now) => selectDue.all(now),
    claim(pk, now) {
      const row = claimRow.get({ pk, now });
      return row && decodeRow(row);
    },
    messageRows: (messageId) => selectMessage.all(messageId).map(decodeRow),
    labelsOf(messageId) {
      const row = selectLabels.get(messageId);
      return row && { client_id: row.client_id, labels: decodeLabels(row.labels) };
    },
    reschedule(pk, change) {
      setRescheduled.run({ pk, ...change });
    },
    list(filters) {
      const params: Record<string, string | number> = { limit: filters.limit };
      if (filters.estado !== undefined) params.estado = filters.estado;
      if (filters.rcpt !== undefined) params.rcpt = containsPattern(filters.rcpt);
      if (filters.message_id !== undefined) params.message_id = filters.message_id;
      if (filters.client_id !== undefined) params.client_id = filters.client_id;
      return listStatement(filters).all(params) as QueueEntry[];
    },
    deleteFinishedBefore: (cutoff) => deleteFinished.run(cutoff).changes,
    countByState() {
      const counts = Object.fromEntries(QUEUE_STATES.map((state) => [state, 0]));
      for (const { estado, count } of selectCounts.all()) counts[estado] = count;
      return counts as Record<QueueState, number>;
    },
    pendingSpoolFiles: () => selectPending.all(),
    recover: (change) => recoverAll(change),
    insert: (entries, now) => insertMany(entries, now),
    insertGroups: (groups) => insertGroups(groups),
    async syncCommitted() {
      // NOTE: in WAL mode with `synchronous = NORMAL` a commit is written to the WAL without a
      // sync, and a checkpoint syncs the WAL before it copies it (SQLite, "PRAGMA synchronous"),
      // so syncing the WAL file after the commit is what FULL would have done inside it.
      await syncToDisk(`${db.name}-wal`, { dataOnly: true });
    },
    recordRetry(pk, { attempts, lastError, now }) {
      setRetry.run({ pk, attempts, lastError, now });
    },
    markSent(pk, change) {
      setFinished.run(sentRow(pk, change));
    },
    markFailed(pk, change) {
      setFinished.run(failedRow(pk, change));
    },
    markFinished: (rows) => finishMany(rows),
  };
}
