import { join } from "node:path";
import { preparePrivateSqliteFile } from "@rd/common";
import BetterSqlite3, { type Database } from "better-sqlite3";
import { migrate } from "./migrations.js";

/** File name of the SQLite database inside `RELAY_DB`. */
export const STATE_FILE = "relay.sqlite";

/** The page cache's bound, in SQLite's negative-KiB form. */
export const PAGE_CACHE_KIB = -2000;

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
  // SQLite's own 2 MiB page cache instead of better-sqlite3's 16 MiB default: the hot pages
  // are the queue's newest rows and indexes, and a larger cache only grew the RSS with the
  // number of messages kept (some 0.4 KiB a message, README "Memory under load").
  db.pragma(`cache_size = ${PAGE_CACHE_KIB}`);
  // Wait instead of failing while another process (an operator's `sqlite3` shell, say) holds the
  // write lock: no `relay` command but `serve` opens the database.
  db.pragma("busy_timeout = 5000");
  migrate(db);
  return db;
}
