import { makeTempDir } from "@rd/common/test-kit";
import type { Database } from "better-sqlite3";
import { afterEach, beforeEach } from "vitest";
import { openStateDatabase } from "../../src/state/state-database.js";

/**
 * A new state database in its own scratch folder for each test of the calling file, closed
 * and removed after it. `reopen` closes it (if still open) and opens the same file again.
 */
export function useScratchState(prefix: string): { readonly db: Database; reopen(): Database } {
  let dir: { path: string; remove(): Promise<void> };
  let db: Database;
  beforeEach(async () => {
    dir = await makeTempDir(prefix);
    db = openStateDatabase(dir.path);
  });
  afterEach(async () => {
    if (db.open) db.close();
    await dir.remove();
  });
  return {
    get db() {
      return db;
    },
    reopen() {
      if (db.open) db.close();
      db = openStateDatabase(dir.path);
      return db;
    },
  };
}
