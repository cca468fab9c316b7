import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.js";
import {
  LocationRepository,
  type StorageLocation,
} from "../../src/releases/location-repository.js";
import { WatchedRepositoryStore } from "../../src/repositories/watched-repository-store.js";
import {
  createTestDatabase,
  DIALECTS,
  dialectAvailable,
  type TestDatabase,
} from "../helpers/test-database.js";

const NOW = new Date(Date.UTC(2026, 0, 10, 12, 0));
const location = (folder: string, extra: Partial<StorageLocation> = {}): StorageLocation => ({
  provider: "local",
  bucket: "public",
  folder,
  ...extra,
});

for (const dialect of DIALECTS) {
  const available = await dialectAvailable(dialect);

  describe.skipIf(!available)(`storage location ownership on ${dialect}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let locations: LocationRepository;
    let repos: WatchedRepositoryStore;

    beforeAll(async () => {
      testDatabase = await createTestDatabase(dialect);
      database = await testDatabase.open();
      locations = new LocationRepository(database.db);
      repos = new WatchedRepositoryStore(database.db);
    });
    afterAll(() => testDatabase.drop());

    const addRepo = (name: string) => repos.add("acme", name, NOW.toISOString());

    it("gives a location to the first repository that claims it, and only to it", async () => {
      const good = await addRepo("good");
      const evil = await addRepo("evil");
      expect(await locations.claim(location("good"), good.id, NOW)).toEqual({ owned: true });
      expect(await locations.claim(location("good"), good.id, NOW)).toEqual({ owned: true });
      expect(await locations.claim(location("good"), evil.id, NOW)).toEqual({
        owned: false,
        owner: "acme/good",
      });
    });

    it.each([
      ["shared", "Shared", 1],
      ["Shared", "SHARED", 2],
      ["SHARED", "shared", 3],
    ] as const)(
      "compares folders without regard to case (%s, then %s)",
      async (first, second, index) => {
        const owner = await addRepo(`case-owner-${index}`);
        const other = await addRepo(`case-other-${index}`);
        await locations.claim(location(`${first}-${index}`), owner.id, NOW);
        expect(await locations.claim(location(`${second}-${index}`), other.id, NOW)).toEqual({
          owned: false,
          owner: owner.fullName,
        });
      },
    );

    it("tells locations apart by provider, bucket and folder", async () => {
      const one = await addRepo("one");
      const two = await addRepo("two");
      expect(await locations.claim(location("app"), one.id, NOW)).toEqual({ owned: true });
      expect(await locations.claim(location("app", { bucket: "mirror" }), two.id, NOW)).toEqual({
        owned: true,
      });
      expect(
        await locations.claim(location("app", { provider: "objectstore" }), two.id, NOW),
      ).toEqual({ owned: true });
      expect(await locations.claim(location("app-2"), two.id, NOW)).toEqual({ owned: true });
    });

    it("lets exactly one of many simultaneous first claims win", async () => {
      const contenders = await Promise.all(
        Array.from({ length: 8 }, (_, index) => addRepo(`racer-${index}`)),
      );
      // A second connection to the same database, as a second instance would have.
      const other = new LocationRepository((await testDatabase.open()).db);
      const claims = await Promise.all(
        contenders.map((repo, index) =>
          (index % 2 === 0 ? locations : other).claim(location("contested"), repo.id, NOW),
        ),
      );
      const winners = claims.filter((claim) => claim.owned);
      expect(winners).toHaveLength(1);
      const winner = contenders[claims.findIndex((claim) => claim.owned)];
      for (const claim of claims) {
        if (!claim.owned) expect(claim.owner).toBe(winner?.fullName);
      }
    });

    it("frees a repository's locations when the repository is deleted", async () => {
      const owner = await addRepo("leaving");
      const successor = await addRepo("successor");
      await locations.claim(location("handed-over"), owner.id, NOW);
      await locations.claim(location("handed-over", { provider: "objectstore" }), owner.id, NOW);
      expect(await repos.remove(owner.id)).toBe(true);
      expect(await locations.claim(location("handed-over"), successor.id, NOW)).toEqual({
        owned: true,
      });
      expect(
        await locations.claim(
          location("handed-over", { provider: "objectstore" }),
          successor.id,
          NOW,
        ),
      ).toEqual({ owned: true });
    });
  });
}
