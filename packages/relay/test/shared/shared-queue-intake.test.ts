import { createLogging, systemClock } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSharedDatabase, type SharedDb } from "../../src/shared/shared-database.js";
import { createSharedQueue } from "../../src/shared/shared-queue.js";
import type { NewQueueEntry } from "../../src/state/queue-repository.js";
import {
  createSharedDatabase,
  mariadbAvailable,
  type TestSharedDatabase,
} from "./shared-relays.js";

// The intake's group commit writes a group of messages with one INSERT for their bodies and one
// for their rows: each row must still name its own message's body, and the pks come back in order.
const available = await mariadbAvailable();

describe.skipIf(!available)("a group of messages written to the shared queue at once", () => {
  let database: TestSharedDatabase;
  let db: SharedDb;
  beforeEach(async () => {
    database = await createSharedDatabase();
    db = await openSharedDatabase(database.url);
  });
  afterEach(async () => {
    await db.destroy();
    await database.drop();
  });

  const message = (id: string, rcpts: string[]): NewQueueEntry[] =>
    rcpts.map((rcpt, index) => ({
      message_id: id,
      client_id: "cli_0123456789abcdef",
      envelope_from: "a@sender.test",
      rcpt,
      estado: "queued",
      next_attempt_at: 100,
      ...(index === 0 && { body: Buffer.from(`body of ${id}`) }),
    }));

  it("gives every row its message's body and returns each group's pks in order", async () => {
    const logger = createLogging({ destination: new LogCapture() }).forTarget("relay::queue");
    const queue = createSharedQueue({ db, leaseSecs: () => 60, clock: systemClock, logger });
    // A row inserted alone first, so the group's pks do not start at 1.
    await queue.insert(message("<m0@s.test>", ["z@r.test"]), 100);
    const groups = [
      { entries: message("<m1@s.test>", ["b@r.test"]), now: 100 },
      { entries: message("<m2@s.test>", ["c@r.test", "d@r.test"]), now: 101 },
      { entries: message("<m3@s.test>", ["e@r.test"]), now: 102 },
    ];
    const pks = await queue.insertGroups(groups);

    const rows = await database.query<Array<{ pk: number; rcpt: string; created_at: number }>>(
      "SELECT pk, rcpt, created_at FROM relay_queue WHERE message_id <> '<m0@s.test>' ORDER BY pk",
    );
    expect(pks).toEqual([[rows[0]?.pk], [rows[1]?.pk, rows[2]?.pk], [rows[3]?.pk]]);
    expect(rows.map((row) => [row.rcpt, Number(row.created_at)])).toEqual([
      ["b@r.test", 100],
      ["c@r.test", 101],
      ["d@r.test", 101],
      ["e@r.test", 102],
    ]);
    for (const [index, group] of groups.entries()) {
      for (const pk of pks[index] ?? []) {
        const claimed = await queue.claim(pk, 200);
        expect(claimed?.message_id).toBe(group.entries[0]?.message_id);
        expect(claimed?.body?.toString()).toBe(`body of ${group.entries[0]?.message_id}`);
      }
    }
    // One body per message, shared by its recipients' rows.
    const [bodies] = await database.query<Array<{ count: number }>>(
      "SELECT count(*) AS count FROM relay_queue_bodies",
    );
    expect(Number(bodies?.count)).toBe(4);
  });
});
