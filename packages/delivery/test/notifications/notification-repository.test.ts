import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.js";
import { NotificationRepository } from "../../src/notifications/notification-repository.js";
import {
  createTestDatabase,
  DIALECTS,
  dialectAvailable,
  type TestDatabase,
} from "../helpers/test-database.js";

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(
    `notification repository (${dialect})`,
    () => {
      let testDatabase: TestDatabase;
      let database: Database;
      let notifications: NotificationRepository;

      const add = (tag: string, createdAt: string) =>
        notifications.add({
          type: "release_processed",
          repository: "acme/widget",
          tag,
          message: `Release ${tag} of acme/widget published`,
          created_at: createdAt,
        });

      beforeAll(async () => {
        testDatabase = await createTestDatabase(dialect);
        database = await testDatabase.open();
        notifications = new NotificationRepository(database.db);
      });
      afterAll(() => testDatabase.drop());
      beforeEach(async () => {
        await database.db.deleteFrom("notifications").execute();
      });

      it("stores a notification as not delivered and marks it delivered", async () => {
        const stored = await add("v1.0.0", "2026-01-15T12:00:00.000Z");
        expect(stored).toEqual({
          id: expect.any(Number),
          type: "release_processed",
          repository: "acme/widget",
          tag: "v1.0.0",
          message: "Release v1.0.0 of acme/widget published",
          delivered: false,
          created_at: "2026-01-15T12:00:00.000Z",
        });
        await notifications.setDelivered(stored.id, true);
        expect((await notifications.list(10))[0]).toEqual({ ...stored, delivered: true });
      });

      it("lists the newest first, up to the limit, and counts them all", async () => {
        await add("v1", "2026-01-10T00:00:00.000Z");
        await add("v3", "2026-01-12T00:00:00.000Z");
        await add("v2", "2026-01-11T00:00:00.000Z");
        expect((await notifications.list(2)).map((n) => n.tag)).toEqual(["v3", "v2"]);
        expect(await notifications.count()).toBe(3);
      });

      it("deletes those created before a cutoff and reports how many", async () => {
        await add("old", "2025-11-01T00:00:00.000Z");
        await add("older", "2025-10-01T00:00:00.000Z");
        await add("recent", "2026-01-14T00:00:00.000Z");
        expect(await notifications.deleteCreatedBefore(new Date("2025-12-16T12:00:00.000Z"))).toBe(
          2,
        );
        expect((await notifications.list(10)).map((n) => n.tag)).toEqual(["recent"]);
      });

      it("deletes one by id and says whether it existed", async () => {
        const stored = await add("v1", "2026-01-10T00:00:00.000Z");
        expect(await notifications.delete(stored.id)).toBe(true);
        expect(await notifications.delete(stored.id)).toBe(false);
        expect(await notifications.count()).toBe(0);
      });
    },
  );
}
