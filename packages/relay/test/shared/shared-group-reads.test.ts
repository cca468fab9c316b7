import { createLogging } from "@rd/common";
import { LogCapture, makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSharedDatabase } from "../../src/shared/shared-database.js";
import { createSharedQuotaRepository } from "../../src/shared/shared-quota.js";
import { createSharedSuppressions } from "../../src/shared/shared-suppressions.js";
import { createSharedWebhooks, type SharedWebhookStore } from "../../src/shared/shared-webhooks.js";
import type { QuotaWindow } from "../../src/state/quota-repository.js";
import { openStateDatabase } from "../../src/state/state-database.js";
import { createWebhookJournal, type WebhookJournal } from "../../src/state/webhook-repository.js";
import {
  createWebhookForwarder,
  type WebhookForwarder,
} from "../../src/webhooks/webhook-forwarder.js";
import { countingStatements, mariadbAvailable, useSharedDb } from "./shared-relays.js";

// What concurrent sends share in the shared database: one quota UPDATE and one suppression
// SELECT per batch of sends (each still answered with its own result), and no endpoint read
// by the webhook dispatcher for events no endpoint takes.
const available = await mariadbAvailable();

const logger = () => createLogging({ destination: new LogCapture() }).forTarget("relay::shared");

describe.skipIf(!available)("statements shared by concurrent sends", () => {
  const shared = useSharedDb();

  const windows = (perHour: number): QuotaWindow[] => [
    { period: "per_hour", start: 3600, limit: perHour },
    { period: "per_day", start: 0, limit: 0 },
  ];

  it("quota charges of one domain made together take one UPDATE, and admit the limit exactly", async () => {
    const counting = countingStatements(shared.db);
    const quota = createSharedQuotaRepository(counting.db, logger());
    // All 20 arrive within the gathering time of the first: they are counted together.
    const results = await Promise.all(
      Array.from({ length: 20 }, () => quota.consume("shop.test", 1, windows(100))),
    );
    expect(results.every((full) => full === undefined)).toBe(true);
    expect(counting.counts.get("UPDATE")).toBe(1);

    // 80 left: the batch of 20 × 5 does not fit whole, so its charges go one by one, in order.
    const limited = await Promise.all(
      Array.from({ length: 21 }, () => quota.consume("shop.test", 5, windows(100))),
    );
    expect(limited.slice(0, 16).every((full) => full === undefined)).toBe(true);
    expect(limited.slice(16).map((full) => full?.map((window) => window.period))).toEqual(
      Array.from({ length: 5 }, () => ["per_hour"]),
    );
    const [row] = await shared.database.query<Array<{ recipients: number }>>(
      "SELECT recipients FROM relay_quota_usage WHERE domain = 'shop.test' AND period = 'per_hour'",
    );
    expect(Number(row?.recipients)).toBe(100);
  });

  it("charges with no limit take one upsert per batch, recreate a missing row, and count exactly", async () => {
    const counting = countingStatements(shared.db);
    const quota = createSharedQuotaRepository(counting.db, logger());
    const usage = async () => {
      const rows = await shared.database.query<Array<{ period: string; recipients: number }>>(
        "SELECT period, recipients FROM relay_quota_usage WHERE domain = 'free.test' ORDER BY period",
      );
      return rows.map((row) => [row.period, Number(row.recipients)]);
    };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => quota.consume("free.test", 1, windows(0))),
    );
    expect(results.every((full) => full === undefined)).toBe(true);
    expect(counting.counts.get("InsertQueryNode")).toBe(1);
    expect(counting.counts.get("UPDATE")).toBeUndefined();
    expect(await usage()).toEqual([
      ["per_day", 20],
      ["per_hour", 20],
    ]);

    // The hour's row pruned under it (another instance's clock ahead): created again, and the
    // day's row counted once.
    await shared.database.query("DELETE FROM relay_quota_usage WHERE period = 'per_hour'");
    expect(await quota.consume("free.test", 3, windows(0))).toBeUndefined();
    expect(await usage()).toEqual([
      ["per_day", 23],
      ["per_hour", 3],
    ]);

    // A limit set since finds what was counted without one.
    expect(await quota.consume("free.test", 1, windows(4))).toBeUndefined();
    const full = await quota.consume("free.test", 1, windows(4));
    expect(full?.map((window) => window.period)).toEqual(["per_hour"]);
  });

  it("charges of different domains in one batch are counted each against its own limit", async () => {
    const quota = createSharedQuotaRepository(shared.db, logger());
    await quota.consume("warm.test", 1, windows(10));
    const [a, b, c] = await Promise.all([
      quota.consume("a.test", 3, windows(3)),
      quota.consume("b.test", 4, windows(3)),
      quota.consume("a.test", 1, windows(3)),
    ]);
    expect(a).toBeUndefined();
    expect(b?.map((window) => window.period)).toEqual(["per_hour"]);
    expect(c?.map((window) => window.period)).toEqual(["per_hour"]);
  });

  it("answers every charge of a batch 503 unavailable when the database does not answer", async () => {
    const gone = await openSharedDatabase(shared.database.url);
    await gone.destroy();
    const quota = createSharedQuotaRepository(gone, logger());
    const answers = await Promise.allSettled(
      ["a.test", "a.test", "b.test"].map((domain) => quota.consume(domain, 1, windows(10))),
    );
    for (const answer of answers) {
      expect(answer).toMatchObject({
        status: "rejected",
        reason: { code: "unavailable", status: 503 },
      });
    }
  });

  it("suppression lookups made together take one SELECT, each answered with its own rows", async () => {
    const counting = countingStatements(shared.db);
    const suppressions = createSharedSuppressions(counting.db, logger());
    const at = new Date().toISOString();
    for (const [client, address] of [
      ["cli_a", "x@r.test"],
      ["cli_b", "y@r.test"],
      ["cli_b", "x@r.test"],
    ] as const) {
      await suppressions.add({
        client_id: client,
        address,
        reason: "bounce",
        source: "manual",
        created_at: at,
      });
    }
    counting.counts.clear();
    const [first, a, b, none] = await Promise.all([
      suppressions.find("cli_a", ["z@r.test"]),
      suppressions.find("cli_a", ["x@r.test", "y@r.test", "x@r.test"]),
      suppressions.find("cli_b", ["x@r.test", "y@r.test"]),
      suppressions.find(null, ["x@r.test"]),
    ]);
    // One SELECT for the four: they arrive within the gathering time of the first.
    expect(counting.counts.get("SelectQueryNode")).toBe(1);
    expect(first).toEqual([]);
    expect(a.map((row) => [row.client_id, row.address])).toEqual([["cli_a", "x@r.test"]]);
    expect(b.map((row) => row.address).sort()).toEqual(["x@r.test", "y@r.test"]);
    expect(none).toEqual([]);
  });

  describe("the webhook forwarder", () => {
    /** Journals a `delivered` event of each message, wakes the forwarder, waits for it. */
    async function forward(
      journal: WebhookJournal,
      forwarder: WebhookForwarder,
      ids: readonly string[],
      leftBehind = 0,
    ): Promise<void> {
      for (const id of ids) {
        journal.add({
          event_id: `evt_${id}`,
          at: Date.now(),
          event: JSON.stringify({ event: "delivered", message_id: `<${id}@s.test>` }),
        });
      }
      forwarder.wake();
      for (let tries = 0; journal.pending(10).length > leftBehind; tries++) {
        if (tries > 500) throw new Error("the journal was not forwarded");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    /** An endpoint taking `delivered` (nothing is sent to it here). */
    const endpoint = () => ({
      id: "whk_1",
      url: "http://127.0.0.1:9/hook",
      events: ["delivered"],
      secret: "s".repeat(32),
      created_at: new Date().toISOString(),
    });
    let dir: Awaited<ReturnType<typeof makeTempDir>>;
    beforeEach(async () => {
      dir = await makeTempDir("relay-forwarder-");
    });
    afterEach(async () => {
      await dir.remove();
    });

    it("wakes the dispatcher only for events that reached the outbox", async () => {
      const state = openStateDatabase(dir.path);
      const journal = createWebhookJournal(state);
      const store = await createSharedWebhooks(shared.db, logger());
      let wakes = 0;
      const forwarder = createWebhookForwarder({
        journal,
        store,
        ownerOf: () => undefined,
        forwarded: () => wakes++,
        logger: logger(),
      });
      await forward(journal, forwarder, ["m1", "m2"]);
      expect(wakes).toBe(0);

      await store.addEndpoint(endpoint());
      await forward(journal, forwarder, ["m3"]);
      await forwarder.stop();
      expect(wakes).toBe(1);
      expect(await store.pendingCount("whk_1")).toBe(1);
      state.close();
    });

    it("removes from the journal the events forwarded before a failure, and only those", async () => {
      const state = openStateDatabase(dir.path);
      const journal = createWebhookJournal(state);
      const outbox = await createSharedWebhooks(shared.db, logger());
      await outbox.addEndpoint(endpoint());
      // The shared database refuses the third event (a fault injected in front of it).
      const store: SharedWebhookStore = {
        ...outbox,
        enqueue: (event) =>
          event.event_id === "evt_m3"
            ? Promise.reject(new Error("connection lost"))
            : outbox.enqueue(event),
      };
      const forwarder = createWebhookForwarder({
        journal,
        store,
        ownerOf: () => undefined,
        forwarded: () => undefined,
        logger: logger(),
      });
      // m3 fails: it and m4 stay behind.
      await forward(journal, forwarder, ["m1", "m2", "m3", "m4"], 2);
      await forwarder.stop();
      expect(journal.pending(10).map((row) => row.event_id)).toEqual(["evt_m3", "evt_m4"]);
      expect(await outbox.pendingCount("whk_1")).toBe(2);
      state.close();
    });
  });
});
