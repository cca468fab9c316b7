import type { Kysely } from "@rd/common/kysely";
import type { SqlDialect } from "../dialect.js";

/** Repositories under watch, and the users who may log in. */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await dialect
    .table(
      db.schema
        .createTable("repositories")
        .addColumn("id", "integer", (col) => col.primaryKey().autoIncrement())
        .addColumn("owner", "varchar(100)", (col) => dialect.caseInsensitive(col.notNull()))
        .addColumn("name", "varchar(100)", (col) => dialect.caseInsensitive(col.notNull()))
        .addColumn("active", "integer", (col) => col.notNull().defaultTo(1))
        .addColumn("last_check", "varchar(32)")
        .addColumn("created_at", "varchar(32)", (col) => col.notNull())
        .addUniqueConstraint("repositories_owner_name_unique", ["owner", "name"]),
    )
    .execute();

  await dialect
    .table(
      db.schema
        .createTable("users")
        .addColumn("id", "integer", (col) => col.primaryKey().autoIncrement())
        .addColumn("email", "varchar(254)", (col) => dialect.caseInsensitive(col.notNull()))
        .addColumn("name", "varchar(200)", (col) => col.notNull())
        .addColumn("password_hash", "varchar(100)", (col) => col.notNull())
        .addColumn("created_at", "varchar(32)", (col) => col.notNull())
        .addUniqueConstraint("users_email_unique", ["email"]),
    )
    .execute();
}
