import type { Kysely } from "@rd/common/kysely";

/**
 * How long each publication took, in milliseconds from the claim to the record (the dashboard's
 * chart). Rows older than the column, and the missing-repository record, have none (null).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("release_history").addColumn("duration_ms", "bigint").execute();
}
