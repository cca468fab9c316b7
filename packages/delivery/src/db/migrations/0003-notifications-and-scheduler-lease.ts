import type { Kysely } from "@rd/common/kysely";
import type { SqlDialect } from "../dialect.js";

/** Stored notifications, and the lease row that gives each scheduler round to one instance. */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await dialect
    .table(
      db.schema
        .createTable("notifications")
        .addColumn("id", "integer", (col) => col.primaryKey().autoIncrement())
        .addColumn("type", "varchar(32)", (col) => col.notNull())
        .addColumn("repository", "varchar(201)", (col) => col.notNull())
        .addColumn("tag", "varchar(255)", (col) => col.notNull())
        .addColumn("message", "text", (col) => col.notNull())
        .addColumn("delivered", "integer", (col) => col.notNull().defaultTo(0))
        .addColumn("created_at", "varchar(32)", (col) => col.notNull()),
    )
    .execute();
  await db.schema
    .createIndex("notifications_created_at")
    .on("notifications")
    .column("created_at")
    .execute();

  await dialect
    .table(
      db.schema
        .createTable("scheduler_lease")
        .addColumn("name", "varchar(64)", (col) => col.primaryKey())
        .addColumn("holder", "varchar(128)", (col) => col.notNull())
        .addColumn("round_at", "varchar(32)", (col) => col.notNull())
        .addColumn("expires_at", "varchar(32)", (col) => col.notNull()),
    )
    .execute();
}
