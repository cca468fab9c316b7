import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";

/** Files that hold a service's state (password hashes, queued mail, secrets): owner only. */
export const PRIVATE_FILE_MODE = 0o600;
/** Folders a service creates for its state: owner only. */
export const PRIVATE_DIR_MODE = 0o700;

/** The database file and the companions SQLite writes beside it (WAL, shared memory, journal). */
const SQLITE_FILE_SUFFIXES = ["", "-wal", "-shm", "-journal"];

/**
 * Makes a SQLite database file private before it is opened: missing folders are created 0700
 * (existing ones keep their mode: they may be the operator's), a missing file is created 0600,
 * and an existing database and its companion files are narrowed to 0600.
 * NOTE: SQLite creates a database 0644 (less the umask) and gives its WAL and shared-memory
 * files the database file's own mode, so a database that is 0600 keeps them 0600 too.
 */
export function preparePrivateSqliteFile(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
  for (const suffix of SQLITE_FILE_SUFFIXES) {
    try {
      chmodSync(`${file}${suffix}`, PRIVATE_FILE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
}
