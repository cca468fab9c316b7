import type { Database } from "better-sqlite3";

/** A key's record: its request's fingerprint and, once answered, that answer. */
export interface IdempotencyRecord {
  readonly fingerprint: string;
  /** null while the first request with the key is still being processed. */
  readonly status: number | null;
  /** The first answer's JSON body. */
  readonly body: string | null;
}

export interface IdempotencyClaim {
  /** Whose key: the client id, '' for `/send` on an open instance. */
  readonly scope: string;
  readonly key: string;
  readonly fingerprint: string;
  /** Epoch seconds; a record that expired by then is replaced. */
  readonly now: number;
  readonly expiresAt: number;
}

type Maybe<T> = T | Promise<T>;

/**
 * The idempotency keys of `/send` and `/send-raw`: this SQLite repository, or the shared
 * database's (`shared/shared-idempotency.ts`) where instances share them.
 */
export interface IdempotencyStore {
  /**
   * Takes the key for a first request (a pending record, unique per scope and key: the lock);
   * undefined when taken, else the live record that holds it.
   */
  claim(claim: IdempotencyClaim): Maybe<IdempotencyRecord | undefined>;
  /** Keeps the first request's answer for the replays. */
  complete(scope: string, key: string, answer: { status: number; body: string }): Maybe<void>;
  /** Frees a pending key (its request was refused): the same key may be tried again. */
  release(scope: string, key: string): Maybe<void>;
  /** Deletes the records expired by `now`; returns how many. */
  prune(now: number): Maybe<number>;
}

export function createIdempotencyRepository(db: Database): IdempotencyStore {
  const deleteExpiredKey = db.prepare<[{ scope: string; key: string; now: number }], void>(
    "DELETE FROM idempotency_keys WHERE scope = @scope AND key = @key AND expires_at <= @now",
  );
  const insertPending = db.prepare<[IdempotencyClaim], void>(`
    INSERT INTO idempotency_keys (scope, key, fingerprint, expires_at)
    VALUES (@scope, @key, @fingerprint, @expiresAt)
    ON CONFLICT DO NOTHING
  `);
  const selectRecord = db.prepare<[{ scope: string; key: string }], IdempotencyRecord>(
    "SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = @scope AND key = @key",
  );
  const claim = db.transaction((entry: IdempotencyClaim) => {
    deleteExpiredKey.run(entry);
    if (insertPending.run(entry).changes === 1) return undefined;
    return selectRecord.get(entry);
  });
  const setAnswer = db.prepare<
    [{ scope: string; key: string; status: number; body: string }],
    void
  >(
    "UPDATE idempotency_keys SET status = @status, body = @body WHERE scope = @scope AND key = @key",
  );
  const deletePending = db.prepare<[{ scope: string; key: string }], void>(
    "DELETE FROM idempotency_keys WHERE scope = @scope AND key = @key AND status IS NULL",
  );
  const deleteExpired = db.prepare<[number], void>(
    "DELETE FROM idempotency_keys WHERE expires_at <= ?",
  );

  return {
    claim: (entry) => claim(entry),
    complete(scope, key, answer) {
      setAnswer.run({ scope, key, ...answer });
    },
    release(scope, key) {
      deletePending.run({ scope, key });
    },
    prune: (now) => deleteExpired.run(now).changes,
  };
}
