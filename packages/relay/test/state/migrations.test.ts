import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MIGRATIONS, type Migration, migrate } from "../../src/state/migrations.js";
import { openStateDatabase, PAGE_CACHE_KIB, STATE_FILE } from "../../src/state/state-database.js";

describe("state database migrations", () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir("relay-state-");
  });
  afterEach(() => dir.remove());

  it("brings a new database to the latest version, and reopening changes nothing", () => {
    const db = openStateDatabase(dir.path);
    expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    db.prepare(
      "INSERT INTO clients VALUES ('cli_0000000000000001', 'n', '[]', 1, 'h', '2026-01-01T00:00:00.000Z')",
    ).run();
    db.close();
    const again = openStateDatabase(dir.path);
    expect(again.prepare("SELECT COUNT(*) AS n FROM clients").get()).toEqual({ n: 1 });
    again.close();
  });

  it("opens with SQLite's 2 MiB page cache, not better-sqlite3's 16 MiB, in WAL mode", () => {
    const db = openStateDatabase(dir.path);
    try {
      expect(PAGE_CACHE_KIB).toBe(-2000);
      expect(db.pragma("cache_size", { simple: true })).toBe(PAGE_CACHE_KIB);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      db.close();
    }
  });

  it("runs only the migrations a database has not seen, in order", () => {
    const db = new BetterSqlite3(join(dir.path, STATE_FILE));
    const first: Migration[] = [{ name: "a", up: "CREATE TABLE a (x INTEGER)" }];
    migrate(db, first);
    migrate(db, [...first, { name: "b", up: "ALTER TABLE a ADD COLUMN y INTEGER" }]);
    expect(db.pragma("user_version", { simple: true })).toBe(2);
    expect(
      db
        .prepare("SELECT * FROM a")
        .columns()
        .map((column) => column.name),
    ).toEqual(["x", "y"]);
    db.close();
  });

  it("rolls back a failing migration whole, leaving the version where it was", () => {
    const db = new BetterSqlite3(join(dir.path, STATE_FILE));
    const broken: Migration[] = [
      { name: "ok", up: "CREATE TABLE a (x INTEGER)" },
      { name: "broken", up: "CREATE TABLE b (x INTEGER); SELECT * FROM nowhere" },
    ];
    expect(() => migrate(db, broken)).toThrow();
    expect(db.pragma("user_version", { simple: true })).toBe(1);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'b'").get()).toBeUndefined();
    db.close();
  });

  it("refuses a database written by a newer relay", () => {
    const db = new BetterSqlite3(join(dir.path, STATE_FILE));
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    expect(() => migrate(db)).toThrow(/newer than this relay/);
    db.close();
  });
});
