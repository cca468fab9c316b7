import type { Kysely } from "@rd/common/kysely";
import type { SqlDialect } from "../dialect.js";

/**
 * Which repository owns each storage location (provider, bucket, top folder). The primary key
 * lets exactly one of two concurrent first publications insert the row; deleting the owning
 * repository frees the location (cascade).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await dialect
    .table(
      db.schema
        .createTable("storage_locations")
        .addColumn("provider", "varchar(16)", (col) => col.notNull())
        .addColumn("bucket", "varchar(63)", (col) => col.notNull())
        // NOTE: compared without regard to case, so `Good` cannot sit beside `good` (they would be
        // one folder on a case-insensitive file system).
        .addColumn("folder", "varchar(255)", (col) => dialect.caseInsensitive(col.notNull()))
        .addColumn("repository_id", "integer", (col) =>
          col.notNull().references("repositories.id").onDelete("cascade"),
        )
        .addColumn("claimed_at", "varchar(32)", (col) => col.notNull())
        .addPrimaryKeyConstraint("storage_locations_pk", ["provider", "bucket", "folder"]),
    )
    .execute();
}
