import { createLogging, systemClock } from "@rd/common";
import { LogCapture, makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Ledger } from "../../src/ledger/ledger.js";
import { createSharedWebhooks } from "../../src/shared/shared-webhooks.js";
import { openStateDatabase } from "../../src/state/state-database.js";
import { createWebhookJournal } from "../../src/state/webhook-repository.js";
import { createWebhooks } from "../../src/webhooks/webhooks.js";
import { mariadbAvailable, useSharedDb } from "./shared-relays.js";

// Which event types have a subscriber, kept in memory by each instance: an event nobody takes
// is dropped before the local journal, and every instance learns of a change at its refresh.
const available = await mariadbAvailable();

const logger = () => createLogging({ destination: new LogCapture() }).forTarget("relay::shared");

const endpoint = (id: string, events: string[]) => ({
  id,
  url: "http://127.0.0.1:9/hook",
  events,
  secret: "s".repeat(32),
  created_at: new Date().toISOString(),
});

describe.skipIf(!available)("webhook subscriptions on the shared database", () => {
  const shared = useSharedDb();
  beforeEach(async () => {
    // The settings row the first instance's boot writes (shared-config-store.ts).
    await shared.db
      .insertInto("relay_shared")
      .values({ id: 1, settings: "{}", settings_version: 1, clients_version: 1 })
      .execute();
  });
  const version = async () =>
    Number(
      (
        await shared.db
          .selectFrom("relay_shared")
          .select("webhooks_version")
          .executeTakeFirstOrThrow()
      ).webhooks_version,
    );

  it("applies a change at once on its instance and on another at its refresh", async () => {
    const a = await createSharedWebhooks(shared.db, logger());
    const b = await createSharedWebhooks(shared.db, logger());
    expect([a.subscribed("delivered"), b.subscribed("delivered")]).toEqual([false, false]);

    await a.addEndpoint(endpoint("whk_1", ["delivered", "failed"]));
    expect([a.subscribed("delivered"), a.subscribed("failed")]).toEqual([true, true]);
    expect(a.subscribed("deferred")).toBe(false);
    // b has not refreshed yet; the counter moved, so its refresh reads the endpoints again.
    expect(b.subscribed("delivered")).toBe(false);
    await b.refresh(await version());
    expect([b.subscribed("delivered"), b.subscribed("failed")]).toEqual([true, true]);

    await b.addEndpoint(endpoint("whk_2", ["failed"]));
    expect(await b.removeEndpoint("whk_1")).toBe(true);
    expect([b.subscribed("delivered"), b.subscribed("failed")]).toEqual([false, true]);
    await a.refresh(await version());
    expect([a.subscribed("delivered"), a.subscribed("failed")]).toEqual([false, true]);
  });

  describe("the ledger's events", () => {
    let dir: Awaited<ReturnType<typeof makeTempDir>>;
    beforeEach(async () => {
      dir = await makeTempDir("relay-subscriptions-");
    });
    afterEach(async () => {
      await dir.remove();
    });

    it("reach the local journal only while an endpoint takes their type", async () => {
      const state = openStateDatabase(dir.path);
      const journal = createWebhookJournal(state);
      const store = await createSharedWebhooks(shared.db, logger());
      const webhooks = createWebhooks({
        outbox: {
          store,
          journal: { ...journal, remove: () => undefined },
          ownerOf: () => undefined,
        },
        clock: systemClock,
        logger: logger(),
      });
      const ledger: Ledger = {
        emit: () => undefined,
        open: async () => undefined,
        close: async () => undefined,
      };
      const observed = webhooks.observe(ledger);
      const delivered = (id: string) =>
        observed.emit({
          event: "delivered",
          message_id: `<${id}@s.test>`,
          rcpt: "ana@r.test",
          host: "mx.r.test",
          attempt: 1,
          tls: false,
          smtp_response: "250 ok",
        });

      delivered("m1");
      expect(journal.pending(10)).toEqual([]);
      await store.addEndpoint(endpoint("whk_1", ["delivered"]));
      delivered("m2");
      // Journaled (the forwarder moves it to the outbox; its removal is left out here).
      expect(journal.pending(10).map((row) => JSON.parse(row.event).message_id)).toEqual([
        "<m2@s.test>",
      ]);
      await webhooks.stop();
      state.close();
    });
  });
});
