import { makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStateDatabase, PAGE_CACHE_KIB } from "../../src/state/state-database.js";

describe("the state database's settings", () => {
  let temp: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    temp = await makeTempDir("relay-state-db-");
  });
  afterEach(async () => {
    await temp.remove();
  });

  it("bounds the page cache at SQLite's 2 MiB, not better-sqlite3's 16 MiB, and keeps WAL", () => {
    const db = openStateDatabase(temp.path);
    try {
      expect(PAGE_CACHE_KIB).toBe(-2000);
      expect(db.pragma("cache_size", { simple: true })).toBe(PAGE_CACHE_KIB);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      db.close();
    }
  });
});
