import { sql } from "@rd/common/kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, migrateToLatest } from "../../src/db/database.js";
import { isUniqueViolation } from "../../src/db/errors.js";
import { MIGRATIONS, type VersionedMigration } from "../../src/db/migrations/index.js";
import { WatchedRepositoryStore } from "../../src/repositories/watched-repository-store.js";
import { type User, UserRepository } from "../../src/users/user-repository.js";
import {
  createTestDatabase,
  DIALECTS,
  dialectAvailable,
  type TestDatabase,
} from "../helpers/test-database.js";

/** A table that references repositories the way release history does. */
const childTable: VersionedMigration = {
  name: "9999-test-children",
  async up(db, dialect) {
    await dialect
      .table(
        db.schema
          .createTable("test_children")
          .addColumn("id", "integer", (col) => col.primaryKey().autoIncrement())
          .addColumn("repository_id", "integer", (col) =>
            col.notNull().references("repositories.id").onDelete("cascade"),
          ),
      )
      .execute();
  },
};

const NOW = "2026-01-15T12:00:00.000Z";
const newUser = (email: string) => ({ email, name: "N", passwordHash: "$2b$04$x", createdAt: NOW });

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`database (${dialect})`, () => {
    let testDb: TestDatabase;
    let database: Database;

    beforeAll(async () => {
      testDb = await createTestDatabase(dialect);
      database = await testDb.open();
    });
    afterAll(() => testDb.drop());

    it("applies migrations once: a second run applies nothing", async () => {
      expect(await migrateToLatest(database)).toEqual([]);
      const applied = await sql<{
        name: string;
      }>`select name from kysely_migration order by name`.execute(database.db);
      expect(applied.rows.map((row) => row.name)).toEqual(MIGRATIONS.map((m) => m.name));
    });

    it("reports a unique violation the same way for both drivers", async () => {
      const repos = new WatchedRepositoryStore(database.db);
      await repos.add("dup", "one", NOW);
      const error = await database.db
        .insertInto("repositories")
        .values({ owner: "dup", name: "one", active: 1, last_check: null, created_at: NOW })
        .execute()
        .catch((e: unknown) => e);
      expect(isUniqueViolation(error)).toBe(true);
      await expect(repos.add("DUP", "ONE", NOW)).rejects.toMatchObject({
        code: "repository_exists",
      });
    });

    it("counts active and total repositories in one query", async () => {
      const repos = new WatchedRepositoryStore(database.db);
      const a = await repos.add("count", "a", NOW);
      await repos.add("count", "b", NOW);
      await repos.setActive(a.id, false);
      const counts = await repos.counts();
      expect(counts.total - counts.active).toBe(1);
      expect(counts).toEqual({ active: expect.any(Number), total: expect.any(Number) });
    });

    it("deleting a repository deletes the rows that reference it (ON DELETE CASCADE)", async () => {
      await migrateToLatest(database, [...MIGRATIONS, childTable]);
      const repos = new WatchedRepositoryStore(database.db);
      const repo = await repos.add("cascade", "parent", NOW);
      await sql`insert into test_children (repository_id) values (${repo.id}), (${repo.id})`.execute(
        database.db,
      );
      expect(await repos.remove(repo.id)).toBe(true);
      const left = await sql<{
        n: number;
      }>`select count(*) as n from test_children where repository_id = ${repo.id}`.execute(
        database.db,
      );
      expect(Number(left.rows[0]?.n)).toBe(0);
    });

    it("records the last check of a repository", async () => {
      const repos = new WatchedRepositoryStore(database.db);
      const repo = await repos.add("touch", "me", NOW);
      await repos.touchLastCheck(repo.id, "2026-01-15T13:00:00.000Z");
      expect((await repos.findByName("TOUCH", "ME"))?.lastCheck).toBe("2026-01-15T13:00:00.000Z");
    });

    it("creates the first user only while none exists, even when two try at once", async () => {
      const users = new UserRepository(database.db);
      const results = await Promise.allSettled([
        users.createFirst(newUser("first-a@example.com")),
        users.createFirst(newUser("first-b@example.com")),
      ]);
      const created = results.filter((r) => r.status === "fulfilled" && r.value !== null);
      expect(created).toHaveLength(1);
      expect(await users.count()).toBe(1);
      expect(await users.createFirst(newUser("late@example.com"))).toBeNull();
      const winner = (created[0] as PromiseFulfilledResult<User>).value;
      await expect(users.create(newUser(winner.email.toUpperCase()))).rejects.toMatchObject({
        code: "email_taken",
      });
    });
  });
}
