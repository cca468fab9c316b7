import { join } from "node:path";
import { preparePrivateSqliteFile } from "@rd/common";
import BetterSqlite3, { type Database } from "better-sqlite3";
import { migrate } from "./migrations.js";

/** File name of the SQLite database inside `RELAY_DB`. */
export const STATE_FILE = "relay.sqlite";

/**
 * Opens (creating when needed) the state database in `dir`: WAL journal, foreign keys on,
 * pending migrations applied. The database and its WAL and shared-memory files are 0600 (it
 * holds the clients' bcrypt hashes), a folder created for it 0700. better-sqlite3 is synchronous; its calls take microseconds on
 * these small indexed tables, which is cheaper than a thread hop per query.
 */
export function openStateDatabase(dir: string): Database {
  const file = join(dir, STATE_FILE);
  preparePrivateSqliteFile(file);
  const db = new BetterSqlite3(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  // Wait instead of failing when `relay check` or a second process holds the write lock.
  db.pragma("busy_timeout = 5000");
  migrate(db);
  return db;
}
