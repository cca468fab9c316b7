import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.js";
import { HistoryRepository } from "../../src/releases/history-repository.js";
import { WatchedRepositoryStore } from "../../src/repositories/watched-repository-store.js";
import {
  createTestDatabase,
  DIALECTS,
  dialectAvailable,
  type TestDatabase,
} from "../helpers/test-database.js";

const at = (minute: number) => new Date(Date.UTC(2026, 0, 10, 12, minute));
const outcome = (status: "success" | "partial" | "failed", minute: number) => ({
  name: "Release",
  status,
  filesCount: 2,
  totalBytes: 5_000_000_000,
  errors: status === "success" ? [] : ["something went wrong"],
  files: [{ file: "a.bin", size: 5_000_000_000, sha256: "ab".repeat(32) }],
  processedAt: at(minute).toISOString(),
  durationMs: 90_000 + minute,
});

for (const dialect of DIALECTS) {
  const available = await dialectAvailable(dialect);

  describe.skipIf(!available)(`the release history on ${dialect}`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let history: HistoryRepository;
    let repos: WatchedRepositoryStore;

    beforeAll(async () => {
      testDatabase = await createTestDatabase(dialect);
      database = await testDatabase.open();
      history = new HistoryRepository(database.db);
      repos = new WatchedRepositoryStore(database.db);
    });
    afterAll(() => testDatabase.drop());

    const addRepo = (name: string) => repos.add("acme", name, at(0).toISOString());

    it("lets one claim win per release; the release is then processed", async () => {
      const repo = await addRepo("claims");
      const first = await history.claim(repo.id, "v1.0.0", "manual", at(1), at(-30));
      expect(first.claimed).toBe(true);
      expect(await history.claim(repo.id, "v1.0.0", "webhook", at(1), at(-30))).toEqual({
        claimed: false,
        reason: "in_progress",
      });
      if (!first.claimed) throw new Error("unreachable");
      await history.complete(first.id, first.token, outcome("success", 2));
      expect((await history.find(first.id))?.status).toBe("success");
      expect(await history.claim(repo.id, "v1.0.0", "scheduler", at(3), at(-27))).toEqual({
        claimed: false,
        reason: "already_processed",
      });
    });

    it("treats tags as case-sensitive", async () => {
      const repo = await addRepo("cases");
      expect((await history.claim(repo.id, "V1", "manual", at(1), at(0))).claimed).toBe(true);
      expect((await history.claim(repo.id, "v1", "manual", at(1), at(0))).claimed).toBe(true);
    });

    it("hands a failed release to the next claim", async () => {
      const repo = await addRepo("retry");
      const first = await history.claim(repo.id, "v1.0.0", "scheduler", at(1), at(-30));
      if (!first.claimed) throw new Error("not claimed");
      await history.complete(first.id, first.token, outcome("failed", 2));
      expect((await history.find(first.id))?.status).toBe("failed");
      const retry = await history.claim(repo.id, "v1.0.0", "webhook", at(3), at(-27));
      expect(retry).toEqual({ claimed: true, id: first.id, token: expect.any(String) });
    });

    it("takes over a claim older than the stale limit, and only once", async () => {
      const repo = await addRepo("stale");
      const dead = await history.claim(repo.id, "v1.0.0", "scheduler", at(0), at(-30));
      expect(dead.claimed).toBe(true);
      // 31 minutes later the claim is stale: two instances try to take it over at once.
      const [a, b] = await Promise.all([
        history.claim(repo.id, "v1.0.0", "scheduler", at(31), at(1)),
        history.claim(repo.id, "v1.0.0", "webhook", at(31), at(1)),
      ]);
      expect([a.claimed, b.claimed].filter(Boolean)).toHaveLength(1);
    });

    it("keeps a renewed claim from going stale", async () => {
      const repo = await addRepo("renewed");
      const live = await history.claim(repo.id, "v1.0.0", "scheduler", at(0), at(-30));
      if (!live.claimed) throw new Error("not claimed");
      expect(await history.renew(live.id, live.token, at(20))).toBe(true);
      // 31 minutes after the claim but 11 after its renewal: still the live instance's.
      expect(await history.claim(repo.id, "v1.0.0", "webhook", at(31), at(1))).toEqual({
        claimed: false,
        reason: "in_progress",
      });
      expect(await history.complete(live.id, live.token, outcome("success", 32))).toBe(true);
      expect((await history.find(live.id))?.status).toBe("success");
    });

    it("tells a claimer whose claim was taken over, and keeps the new holder's row", async () => {
      const repo = await addRepo("lost");
      const late = await history.claim(repo.id, "v1.0.0", "scheduler", at(0), at(-30));
      if (!late.claimed) throw new Error("not claimed");
      const taker = await history.claim(repo.id, "v1.0.0", "webhook", at(31), at(1));
      if (!taker.claimed) throw new Error("not taken over");
      expect(taker.token).not.toBe(late.token);
      // The first claimer's renewal and outcome both come too late, whatever the outcome.
      expect(await history.renew(late.id, late.token, at(32))).toBe(false);
      for (const status of ["success", "partial", "failed"] as const) {
        expect(await history.complete(late.id, late.token, outcome(status, 33))).toBe(false);
      }
      expect((await history.list({ limit: 10, repositoryId: repo.id })).total).toBe(0);
      expect(await history.renew(taker.id, taker.token, at(34))).toBe(true);
      expect(await history.complete(taker.id, taker.token, outcome("success", 35))).toBe(true);
      expect(await history.renew(taker.id, taker.token, at(36))).toBe(false);
      const { history: records } = await history.list({ limit: 10, repositoryId: repo.id });
      expect(records).toEqual([expect.objectContaining({ status: "success", trigger: "webhook" })]);
    });

    it("tells a claimer whose claim a reprocess deleted", async () => {
      const repo = await addRepo("claim-deleted");
      const claim = await history.claim(repo.id, "v1.0.0", "manual", at(0), at(-30));
      if (!claim.claimed) throw new Error("not claimed");
      await history.remove(repo.id, "v1.0.0");
      expect(await history.renew(claim.id, claim.token, at(1))).toBe(false);
      expect(await history.complete(claim.id, claim.token, outcome("success", 2))).toBe(false);
    });

    it("lists finished records newest first with the total, hiding claims in progress", async () => {
      const repo = await addRepo("listed");
      const other = await addRepo("other-listed");
      for (const [tag, minute, status] of [
        ["v1", 10, "success"],
        ["v2", 20, "partial"],
        ["v3", 30, "failed"],
      ] as const) {
        const claim = await history.claim(repo.id, tag, "manual", at(minute), at(0));
        if (!claim.claimed) throw new Error("not claimed");
        await history.complete(claim.id, claim.token, outcome(status, minute));
      }
      await history.claim(repo.id, "v4", "manual", at(40), at(0)); // still processing
      const otherClaim = await history.claim(other.id, "v9", "webhook", at(50), at(0));
      if (!otherClaim.claimed) throw new Error("not claimed");
      await history.complete(otherClaim.id, otherClaim.token, outcome("success", 50));

      const mine = await history.list({ limit: 2, repositoryId: repo.id });
      expect(mine.total).toBe(3);
      expect(mine.history).toEqual([
        {
          id: expect.any(Number),
          repository: "acme/listed",
          tag: "v3",
          name: "Release",
          status: "failed",
          files_count: 2,
          total_bytes: 5_000_000_000,
          errors: ["something went wrong"],
          files: [{ file: "a.bin", size: 5_000_000_000, sha256: "ab".repeat(32) }],
          trigger: "manual",
          processed_at: at(30).toISOString(),
          duration_ms: 90_030,
        },
        expect.objectContaining({ tag: "v2", status: "partial" }),
      ]);
      const all = await history.list({ limit: 100 });
      expect(all.history[0]).toMatchObject({ repository: "acme/other-listed", tag: "v9" });
      expect(all.history.some((record) => record.tag === "v4")).toBe(false);
    });

    it("counts releases processed since a moment (success and partial only)", async () => {
      const repo = await addRepo("counted");
      for (const [tag, minute, status] of [
        ["v1", 100, "success"],
        ["v2", 110, "partial"],
        ["v3", 120, "failed"],
        ["v0", 5, "success"],
      ] as const) {
        const claim = await history.claim(repo.id, tag, "manual", at(minute), at(0));
        if (!claim.claimed) throw new Error("not claimed");
        await history.complete(claim.id, claim.token, outcome(status, minute));
      }
      expect(await history.countProcessedSince(at(100))).toBe(2);
    });

    it("loses a repository's history when the repository is deleted", async () => {
      const repo = await addRepo("deleted");
      const claim = await history.claim(repo.id, "v1", "manual", at(1), at(0));
      if (!claim.claimed) throw new Error("not claimed");
      await history.complete(claim.id, claim.token, outcome("success", 1));
      expect(await repos.remove(repo.id)).toBe(true);
      expect(await history.find(claim.id)).toBeNull();
      expect((await history.list({ limit: 100, repositoryId: repo.id })).total).toBe(0);
    });
  });
}
