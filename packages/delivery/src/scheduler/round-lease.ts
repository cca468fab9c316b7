import type { Clock } from "@rd/common";
import type { Kysely } from "@rd/common/kysely";
import { isUniqueViolation } from "../db/errors.js";
import type { Schema } from "../db/schema.js";
import type { RoundLease } from "./release-scheduler.js";

/**
 * A claimed round counts as running for this long unless renewed; an instance that dies
 * mid-round therefore blocks the others for at most this long. The scheduler renews the
 * claim every `LEASE_RENEW_MS` while its round runs.
 */
const LEASE_TTL_MS = 60_000;
export const LEASE_RENEW_MS = LEASE_TTL_MS / 3;
/** The one lease row (the table could hold other named leases). */
const LEASE_NAME = "release-scheduler";

/**
 * The scheduler lease in the `scheduler_lease` table: one row holding the last claimed round
 * (`round_at`), its holder and when the claim expires. Claiming is one conditional UPDATE —
 * a later round, and no unexpired claim by another holder — which the database applies
 * atomically, so of two instances asking at once exactly one sees its row updated. The very
 * first claim INSERTs the row; the primary key makes a concurrent second insert fail.
 */
export class DatabaseRoundLease implements RoundLease {
  constructor(
    private readonly db: Kysely<Schema>,
    /** This instance's identity (unique per process). */
    private readonly holder: string,
    private readonly clock: Clock,
    private readonly ttlMs: number = LEASE_TTL_MS,
  ) {}

  async acquire(roundAt: Date): Promise<boolean> {
    const now = this.clock.now();
    const claim = {
      holder: this.holder,
      round_at: roundAt.toISOString(),
      expires_at: this.expiry(now),
    };
    const updated = await this.db
      .updateTable("scheduler_lease")
      .set(claim)
      .where("name", "=", LEASE_NAME)
      .where("round_at", "<", claim.round_at)
      .where((eb) =>
        eb.or([eb("expires_at", "<=", now.toISOString()), eb("holder", "=", this.holder)]),
      )
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 1) return true;
    try {
      await this.db
        .insertInto("scheduler_lease")
        .values({ name: LEASE_NAME, ...claim })
        .execute();
      return true;
    } catch (error) {
      // The row exists: the round (or a running one) belongs to someone else.
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async renew(): Promise<void> {
    await this.db
      .updateTable("scheduler_lease")
      .set({ expires_at: this.expiry(this.clock.now()) })
      .where("name", "=", LEASE_NAME)
      .where("holder", "=", this.holder)
      .execute();
  }

  async release(): Promise<void> {
    await this.db
      .updateTable("scheduler_lease")
      .set({ expires_at: this.clock.now().toISOString() })
      .where("name", "=", LEASE_NAME)
      .where("holder", "=", this.holder)
      .execute();
  }

  private expiry(now: Date): string {
    return new Date(now.getTime() + this.ttlMs).toISOString();
  }
}
