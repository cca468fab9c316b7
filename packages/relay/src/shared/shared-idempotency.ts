import type { Logger } from "@rd/common";
import type { IdempotencyStore } from "../state/idempotency-repository.js";
import type { SharedDb } from "./shared-database.js";
import { sharedDatabaseUnavailable } from "./shared-quota.js";

/** mysql2's errno of ER_DUP_ENTRY: the key is held already. */
const DUPLICATE_ENTRY = 1062;
/** A claim that finds the key held, then gone (released in between), tries again this often. */
const CLAIM_TRIES = 3;

/**
 * Idempotency keys in the shared database: one key holds for every instance. The pending row's
 * insert is the lock (primary key scope + key): of two instances claiming one key at once, one
 * inserts and the other meets the duplicate and reads the record.
 */
export function createSharedIdempotency(db: SharedDb, logger: Logger): IdempotencyStore {
  const guarded = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw sharedDatabaseUnavailable(error, logger);
    }
  };

  return {
    claim: (claim) =>
      guarded(async () => {
        const { scope, key } = claim;
        for (let attempt = 1; attempt <= CLAIM_TRIES; attempt++) {
          await db
            .deleteFrom("relay_idempotency_keys")
            .where("scope", "=", scope)
            .where("key", "=", key)
            .where("expires_at", "<=", claim.now)
            .execute();
          try {
            await db
              .insertInto("relay_idempotency_keys")
              .values({ scope, key, fingerprint: claim.fingerprint, expires_at: claim.expiresAt })
              .execute();
            return undefined;
          } catch (error) {
            if ((error as { errno?: number }).errno !== DUPLICATE_ENTRY) throw error;
          }
          const held = await db
            .selectFrom("relay_idempotency_keys")
            .select(["fingerprint", "status", "body"])
            .where("scope", "=", scope)
            .where("key", "=", key)
            .executeTakeFirst();
          if (held) return held;
        }
        throw new Error(`idempotency key claimed and released ${CLAIM_TRIES} times in a row`);
      }),
    complete: (scope, key, answer) =>
      guarded(async () => {
        await db
          .updateTable("relay_idempotency_keys")
          .set(answer)
          .where("scope", "=", scope)
          .where("key", "=", key)
          .execute();
      }),
    release: (scope, key) =>
      guarded(async () => {
        await db
          .deleteFrom("relay_idempotency_keys")
          .where("scope", "=", scope)
          .where("key", "=", key)
          .where("status", "is", null)
          .execute();
      }),
    prune: (now) =>
      guarded(async () => {
        const result = await db
          .deleteFrom("relay_idempotency_keys")
          .where("expires_at", "<=", now)
          .executeTakeFirst();
        return Number(result.numDeletedRows);
      }),
  };
}
