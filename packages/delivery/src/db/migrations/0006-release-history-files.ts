import type { Kysely } from "@rd/common/kysely";
import type { SqlDialect } from "../dialect.js";

/**
 * Each processed release's files with their SHA-256 (a JSON array of `{file, size, sha256}`),
 * so the history says what was published byte for byte. Rows older than the column have none
 * (read as an empty list).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema.alterTable("release_history").addColumn("files", dialect.largeText).execute();
}
