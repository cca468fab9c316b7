import { preparePrivateSqliteFile } from "@rd/common";
import { Kysely, Migrator, MysqlDialect, SqliteDialect, sql } from "@rd/common/kysely";
import SQLite from "better-sqlite3";
import type { DatabaseConfig } from "../config.js";
import { dialectFor, type SqlDialect } from "./dialect.js";
import { migrationProvider, type VersionedMigration } from "./migrations/index.js";
import type { Schema } from "./schema.js";

/** How long a health probe may take before the database counts as down. */
const HEALTH_TIMEOUT_MS = 2_000;
/** MySQL pool size: enough for concurrent requests plus the scheduler. */
const MYSQL_POOL_SIZE = 10;
/** SQLite waits this long for a lock held by another connection before failing. */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** An open database: the query builder, its dialect helpers, a health probe, and close. */
export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: SqlDialect;
  /** True when a trivial query answers within HEALTH_TIMEOUT_MS. */
  isHealthy(): Promise<boolean>;
  close(): Promise<void>;
}

/** Opens SQLite (creating its folder 0700 and its file 0600) or a MySQL/MariaDB pool. Does not migrate. */
export function openDatabase(config: DatabaseConfig): Database {
  const dialect = dialectFor(config.kind);
  let db: Kysely<Schema>;
  if (config.kind === "sqlite") {
    // Users' bcrypt hashes and refresh-token state: the file (and its WAL) is owner-only.
    preparePrivateSqliteFile(config.file);
    const sqlite = new SQLite(config.file);
    // NOTE: SQLite enforces foreign keys (ON DELETE CASCADE) only when asked, per connection.
    sqlite.pragma("foreign_keys = ON");
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) });
  } else {
    // NOTE: a pool factory, so mysql2 (some 5 MiB of memory) is loaded at the first query and
    // never on SQLite.
    const pool = async () =>
      (await import("mysql2")).createPool({
        uri: config.url,
        connectionLimit: MYSQL_POOL_SIZE,
        connectTimeout: HEALTH_TIMEOUT_MS * 2,
        timezone: "Z",
        charset: "utf8mb4_unicode_ci",
      });
    db = new Kysely<Schema>({ dialect: new MysqlDialect({ pool }) });
  }
  let closed = false;
  return {
    db,
    dialect,
    async isHealthy() {
      if (closed) return false;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
      });
      const probe = sql`select 1 as ok`.execute(db).then(
        () => true,
        () => false,
      );
      try {
        return await Promise.race([probe, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(
  database: Database,
  migrations?: readonly VersionedMigration[],
): Promise<string[]> {
  const migrator = new Migrator({
    db: database.db,
    provider: migrationProvider(database.dialect, migrations),
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  const failed = results.find((result) => result.status === "Error");
  if (error) {
    const where = failed ? ` (migration ${failed.migrationName})` : "";
    throw new Error(`database migration failed${where}: ${(error as Error).message ?? error}`, {
      cause: error,
    });
  }
  return results.filter((r) => r.status === "Success").map((r) => r.migrationName);
}
