import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "../../src/db/database.js";
import { HistoryRepository } from "../../src/releases/history-repository.js";
import { CLAIM_LOST } from "../../src/releases/publish-attempts.js";
import type { Processing } from "../../src/releases/release-result.js";
import type { WatchedRepository } from "../../src/repositories/watched-repository-store.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";
import { createProcessingHarness, type ProcessingHarness } from "./processing-harness.js";

/** A lease short enough for a publish to outlast it several times (renewed every 333 ms). */
const LEASE_MS = 1_000;
const POLICY = { staleClaimMs: LEASE_MS };
/** Bound of every wait for a renewal (a third of the lease, on a loaded machine). */
const WAIT = { timeout: 10_000, interval: 20 };

const declaration = (folder: string) =>
  `storage: {bucket: public, folder_name: ${folder}}\nartifacts: [{source: app.bin, destination: app.bin}]\n`;

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`a release claim on ${dialect}`, () => {
    let h: ProcessingHarness;
    /** The second instance's connection to the same database. */
    let other: Database;

    beforeAll(async () => {
      h = await createProcessingHarness(dialect);
      other = await h.testDatabase.open();
    });
    afterAll(async () => {
      await other.close();
      await h.close();
    });
    afterEach(() => {
      vi.restoreAllMocks();
    });

    /** A repository whose release `v1.0.0` downloads slowly: until the returned `finish`. */
    const slowRelease = async (fullName: string) => {
      const repository = await h.addRepository(fullName);
      h.releases.addRelease(fullName, {
        tag: "v1.0.0",
        assets: [{ name: "app.bin", content: `${fullName} 1.0.0` }],
        files: { ".delivery.yml": declaration(fullName.replace("/", "-")) },
      });
      let finish = () => {};
      h.releases.state.holdNextDownloadUntil = new Promise((resolve) => {
        finish = resolve;
      });
      const downloads = h.releases.state.signedUrls.length;
      /**
       * Starts its publish and waits until the held download began (the claim is taken); the
       * processing is wrapped, or awaiting this would wait for it.
       */
      const publish = async () => {
        const publishing = h.processor({ policy: POLICY }).check(repository, "manual");
        await vi.waitFor(
          () => expect(h.releases.state.signedUrls.length).toBe(downloads + 1),
          WAIT,
        );
        return { publishing };
      };
      return { repository, publish, finish: () => finish() };
    };

    const claimRow = (repository: WatchedRepository) =>
      h.database.db
        .selectFrom("release_history")
        .select(["id", "claimed_at", "status"])
        .where("repository_id", "=", repository.id)
        .executeTakeFirstOrThrow();

    /** Lets the (manual) clock run on by `ms`, then waits for the claim's renewal at that time. */
    const passAndRenew = async (repository: WatchedRepository, ms: number) => {
      h.clock.advance(ms);
      const now = h.clock.now().toISOString();
      await vi.waitFor(async () => expect((await claimRow(repository)).claimed_at).toBe(now), WAIT);
    };

    const statusOf = (processing: Processing) =>
      processing.outcome === "published" ? processing.record.status : processing.outcome;

    it("is renewed while a publish outlasts its lease: another instance leaves it alone, one record, no renewal after the end", async () => {
      const renewals = vi.spyOn(HistoryRepository.prototype, "renew");
      renewals.mockClear();
      const { repository, publish, finish } = await slowRelease("acme/slow");
      const downloads = h.releases.state.signedUrls.length;
      const { publishing } = await publish();
      const secondInstance = h.processor({ database: other, policy: POLICY });

      // Five renewals 0.6 lease apart: the publish lasts three leases, and the claim is never
      // older than one when the other instance checks the same release.
      for (let round = 0; round < 5; round++) {
        await passAndRenew(repository, 0.6 * LEASE_MS);
        const meanwhile = await secondInstance.check(repository, "scheduler");
        expect(meanwhile.outcome).toBe("in_progress");
        expect(meanwhile.result.skipped).toEqual(["v1.0.0: being processed by another instance"]);
      }
      finish();
      const published = await publishing;

      expect(statusOf(published)).toBe("success");
      expect(published.result.errors).toEqual([]);
      expect(h.releases.state.signedUrls.length).toBe(downloads + 1);
      const { history, total } = await h.history.list({ limit: 10, repositoryId: repository.id });
      expect(total).toBe(1);
      expect(history).toEqual([expect.objectContaining({ status: "success", trigger: "manual" })]);
      expect(statusOf(await secondInstance.check(repository, "scheduler"))).toBe(
        "already_processed",
      );

      // The heartbeat stopped with the publish: while another publish renews its own claim
      // twice (two periods), the finished claim gets no renewal.
      const { id } = await claimRow(repository);
      const renewalsOf = (claimId: number) =>
        renewals.mock.calls.filter(([renewed]) => renewed === claimId).length;
      const ended = renewalsOf(id);
      expect(ended).toBeGreaterThanOrEqual(5);
      const next = await slowRelease("acme/next");
      const { publishing: nextPublishing } = await next.publish();
      await passAndRenew(next.repository, 0.1 * LEASE_MS);
      await passAndRenew(next.repository, 0.1 * LEASE_MS);
      expect(renewalsOf(id)).toBe(ended);
      next.finish();
      expect(statusOf(await nextPublishing)).toBe("success");
    });

    it("lost to another instance stops the publish before it writes: failed with the reason, the new holder's row kept", async () => {
      const { repository, publish, finish } = await slowRelease("acme/lost");
      const { publishing } = await publish();
      try {
        await passAndRenew(repository, 0.5 * LEASE_MS);
        // Another instance takes the claim over (as after a renewal that came too late).
        const now = h.clock.now();
        const after = new Date(now.getTime() + 1);
        const taker = await h.history.claim(repository.id, "v1.0.0", "webhook", now, after);
        expect(taker.claimed).toBe(true);

        // The next renewal finds the claim gone and cuts the held download.
        const stopped = await publishing;
        expect(statusOf(stopped)).toBe("failed");
        expect(stopped.result.errors).toEqual([CLAIM_LOST]);
        expect(stopped.result.processed).toEqual([]);
        expect(await h.keys(h.local, "public", "acme-lost/")).toEqual([]);
        // The row is still the taker's claim: nothing was recorded over it.
        expect(await claimRow(repository)).toMatchObject({ status: "processing" });
        if (!taker.claimed) throw new Error("unreachable");
        expect(await h.history.renew(taker.id, taker.token, h.clock.now())).toBe(true);
      } finally {
        finish();
      }
    });
  });
}
