import { type Kysely, sql } from "@rd/common/kysely";
import type { SqlDialect } from "../dialect.js";

/**
 * One row per (repository, tag): the release's processing record, and the claim that makes
 * concurrent instances publish it once (the unique key serialises their inserts).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await dialect
    .table(
      db.schema
        .createTable("release_history")
        .addColumn("id", "integer", (col) => col.primaryKey().autoIncrement())
        .addColumn("repository_id", "integer", (col) =>
          col.notNull().references("repositories.id").onDelete("cascade"),
        )
        // NOTE: tags are case-sensitive (`V1` and `v1` are two tags); MySQL's table collation
        // is not, so the column asks for a binary one there.
        .addColumn("tag", "varchar(255)", (col) =>
          dialect.kind === "mysql"
            ? col.notNull().modifyEnd(sql`collate utf8mb4_bin`)
            : col.notNull(),
        )
        .addColumn("name", "varchar(500)", (col) => col.notNull())
        .addColumn("status", "varchar(16)", (col) => col.notNull())
        .addColumn("files_count", "integer", (col) => col.notNull().defaultTo(0))
        .addColumn("total_bytes", "bigint", (col) => col.notNull().defaultTo(0))
        .addColumn("errors", "text", (col) => col.notNull())
        .addColumn("triggered_by", "varchar(16)", (col) => col.notNull())
        .addColumn("claimed_at", "varchar(32)", (col) => col.notNull())
        .addColumn("processed_at", "varchar(32)")
        .addUniqueConstraint("release_history_repository_tag_unique", ["repository_id", "tag"]),
    )
    .execute();
  await db.schema
    .createIndex("release_history_processed_at")
    .on("release_history")
    .columns(["processed_at", "id"])
    .execute();
}
