import { createLogging, systemClock } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";
import { createSharedQueue } from "../../src/shared/shared-queue.js";
import type { NewQueueEntry } from "../../src/state/queue-repository.js";
import { mariadbAvailable, useSharedDb } from "./shared-relays.js";

// The shared queue keeps each message's /send tags and metadata with its rows, as SQLite does.
const available = await mariadbAvailable();

describe.skipIf(!available)("tags and metadata in the shared queue", () => {
  const shared = useSharedDb();

  const entry = (rcpt: string, overrides: Partial<NewQueueEntry> = {}): NewQueueEntry => ({
    message_id: "<m1@sender.test>",
    client_id: "cli_0123456789abcdef",
    envelope_from: "a@sender.test",
    rcpt,
    estado: "queued",
    next_attempt_at: 100,
    ...overrides,
  });

  it("stores them as JSON; the claim and labelsOf give them back", async () => {
    const logger = createLogging({ destination: new LogCapture() }).forTarget("relay::queue");
    const queue = createSharedQueue({
      db: shared.db,
      leaseSecs: () => 60,
      clock: systemClock,
      logger,
    });
    const labels = { tags: ["welcome"], metadata: { user_id: "42" } };
    const [pk = 0] = await queue.insert(
      [entry("b@r.test", { labels, body: Buffer.from("x") }), entry("c@r.test", { labels })],
      100,
    );
    const [stored] = await shared.database.query<Array<{ labels: string }>>(
      "SELECT labels FROM relay_queue WHERE pk = ?",
      [pk],
    );
    expect(JSON.parse(stored?.labels ?? "null")).toEqual(labels);
    expect((await queue.claim(pk, 101))?.labels).toEqual(labels);
    expect(await queue.labelsOf("<m1@sender.test>")).toEqual({
      client_id: "cli_0123456789abcdef",
      labels,
    });
    await queue.insert([entry("d@r.test", { message_id: "<m2@s.test>", client_id: null })], 100);
    expect(await queue.labelsOf("<m2@s.test>")).toEqual({
      client_id: null,
      labels: { tags: [], metadata: {} },
    });
    expect(await queue.labelsOf("<unknown@s.test>")).toBeUndefined();
  });
});
