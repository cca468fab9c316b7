import type { Kysely } from "@rd/common/kysely";

/**
 * The token of the instance holding a release's `processing` claim: the holder renews its
 * claim, and records the outcome, only while the row still carries its token, so a claim taken
 * over by another instance is noticed instead of written over. Rows older than the column
 * have none (they are finished, or taken over by the next check).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("release_history").addColumn("claim_token", "varchar(36)").execute();
}
