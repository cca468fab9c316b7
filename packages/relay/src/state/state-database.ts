import { mkdirSync } from "node:fs";
import { join } from "node:path";
import BetterSqlite3, { type Database } from "better-sqlite3";
import { migrate } from "./migrations.js";

/** File name of the SQLite database inside `RELAY_DB`. */
export const STATE_FILE = "relay.sqlite";

/**
 * Opens (creating when needed) the state database in `dir`: WAL journal, foreign keys on,
 * pending migrations applied. better-sqlite3 is synchronous; its calls take microseconds on
 * these small indexed tables, which is cheaper than a thread hop per query.
 */
export function openStateDatabase(dir: string): Database {
  mkdirSync(dir, { recursive: true });
  const db = new BetterSqlite3(join(dir, STATE_FILE));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  // Wait instead of failing when `relay check` or a second process holds the write lock.
  db.pragma("busy_timeout = 5000");
  migrate(db);
  return db;
}
