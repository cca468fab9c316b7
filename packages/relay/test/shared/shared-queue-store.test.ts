import { createLogging, systemClock } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { createConnection } from "mysql2/promise";
import { describe, expect, it } from "vitest";
import { createQueueIntake } from "../../src/queue/queue-intake.js";
import { createSharedQueue } from "../../src/shared/shared-queue.js";
import type { NewQueueEntry } from "../../src/state/queue-repository.js";
import { countingStatements, mariadbAvailable, useSharedDb } from "./shared-relays.js";

// The intake's group commit writes a group of messages with one INSERT for their bodies and one
// for their rows: each row must still name its own message's body, and the pks come back in order.
// Ending rows removes a body with the last pending row of its message, and locks no other row;
// the body of a message of one recipient goes with its row's end, without reading other rows.
const available = await mariadbAvailable();

describe.skipIf(!available)("the shared queue's intake and ends", () => {
  const shared = useSharedDb();

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

  it("answers 503 naming the shared database, not local storage, when the intake's insert fails", async () => {
    const capture = new LogCapture();
    const logger = createLogging({ destination: capture }).forTarget("relay::queue");
    const queue = createSharedQueue({
      db: shared.db,
      leaseSecs: () => 60,
      clock: systemClock,
      logger,
    });
    const enqueue = createQueueIntake({ queue, spool: undefined, clock: systemClock, logger });
    await shared.database.query("DROP TABLE relay_queue_bodies");
    const refused = enqueue({
      messageId: "<m9@s.test>",
      clientId: "cli_0123456789abcdef",
      envelopeFrom: "a@s.test",
      domain: "s.test",
      recipients: ["b@r.test"],
      message: Buffer.from("From: a@s.test\r\n\r\nhello\r\n"),
    });
    await expect(refused).rejects.toMatchObject({
      code: "unavailable",
      status: 503,
      message:
        "the message could not be stored in the queue (the shared database did not answer); nothing was accepted, retry later",
    });
    // The cause is in the log, for the operator.
    expect(JSON.stringify(capture.forTarget("relay::queue"))).toContain("relay_queue_bodies");
  });

  it("gives every row its message's body and returns each group's pks in order", async () => {
    const logger = createLogging({ destination: new LogCapture() }).forTarget("relay::queue");
    const counting = countingStatements(shared.db);
    const queue = createSharedQueue({
      db: counting.db,
      leaseSecs: () => 60,
      clock: systemClock,
      logger,
    });
    // A row inserted alone first, so the group's pks do not start at 1.
    await queue.insert(message("<m0@s.test>", ["z@r.test"]), 100);
    const groups = [
      { entries: message("<m1@s.test>", ["b@r.test"]), now: 100 },
      { entries: message("<m2@s.test>", ["c@r.test", "d@r.test"]), now: 101 },
      { entries: message("<m3@s.test>", ["e@r.test"]), now: 102 },
    ];
    counting.sent.count = 0;
    const pks = await queue.insertGroups(groups);
    // The auto-increment step (read once per process), then bodies and rows in one transaction
    // sent whole.
    expect(counting.sent.count).toBe(2);

    const rows = await shared.database.query<
      Array<{ pk: number; rcpt: string; created_at: number }>
    >("SELECT pk, rcpt, created_at FROM relay_queue WHERE message_id <> '<m0@s.test>' ORDER BY pk");
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
    const [bodies] = await shared.database.query<Array<{ count: number }>>(
      "SELECT count(*) AS count FROM relay_queue_bodies",
    );
    expect(Number(bodies?.count)).toBe(4);
  });

  it("removes a body with its message's last pending row; an end locks no other message's row", async () => {
    const logger = createLogging({ destination: new LogCapture() }).forTarget("relay::queue");
    const queue = createSharedQueue({
      db: shared.db,
      leaseSecs: () => 60,
      clock: systemClock,
      logger,
    });
    const [[first = 0, second = 0] = [], [third = 0] = []] = await queue.insertGroups([
      { entries: message("<m1@s.test>", ["b@r.test", "c@r.test"]), now: 100 },
      { entries: message("<m2@s.test>", ["d@r.test"]), now: 100 },
    ]);
    const bodies = async () =>
      (
        await shared.database.query<Array<{ count: number }>>(
          "SELECT count(*) AS count FROM relay_queue_bodies",
        )
      ).map((row) => Number(row.count))[0];
    await queue.claim(first, 200);
    await queue.markSent(first, { attempts: 1, now: 201 });
    expect(await bodies()).toBe(2);
    // The second row's end waits for the body's row lock, held by another connection, in the
    // middle of its transaction: meanwhile another instance claims the other message's entry,
    // which an end holding locks on other rows would make it skip.
    const [owner] = await shared.database.query<Array<{ body_id: number }>>(
      "SELECT body_id FROM relay_queue WHERE pk = ?",
      [first],
    );
    const holder = await createConnection(shared.database.url);
    await holder.query("BEGIN");
    await holder.query("SELECT id FROM relay_queue_bodies WHERE id = ? FOR UPDATE", [
      owner?.body_id,
    ]);
    await queue.claim(second, 202);
    const ending = queue.markFailed(second, { attempts: 1, lastError: "550 no", now: 203 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = createSharedQueue({
      db: shared.db,
      leaseSecs: () => 60,
      clock: systemClock,
      logger,
    });
    const claimed = await other.claim(third, 204);
    await holder.query("COMMIT");
    await holder.end();
    await ending;
    expect(claimed?.body?.toString()).toBe("body of <m2@s.test>");
    expect(await bodies()).toBe(1);
  });

  it("deletes a one-recipient message's body in its end, without locking or reading other rows", async () => {
    const counting = countingStatements(shared.db);
    const queue = createSharedQueue({
      db: counting.db,
      leaseSecs: () => 60,
      clock: systemClock,
      logger: createLogging({ destination: new LogCapture() }).forTarget("relay::queue"),
    });
    const [[alone = 0] = [], [first = 0, second = 0] = []] = await queue.insertGroups([
      { entries: message("<m1@s.test>", ["b@r.test"]), now: 100 },
      { entries: message("<m2@s.test>", ["c@r.test", "d@r.test"]), now: 100 },
    ]);
    const bodiesOf = async (id: string) =>
      Number(
        (
          await shared.database.query<Array<{ count: number }>>(
            "SELECT count(*) AS count FROM relay_queue_bodies b JOIN relay_queue q ON q.body_id = b.id WHERE q.message_id = ?",
            [id],
          )
        )[0]?.count,
      );
    await Promise.all([alone, first, second].map((pk) => queue.claim(pk, 200)));
    counting.counts.clear();
    counting.sent.count = 0;
    await queue.markSent(alone, { attempts: 1, now: 201 });
    expect(Object.fromEntries(counting.counts)).toEqual({
      UpdateQueryNode: 1,
      DeleteQueryNode: 1,
    });
    // Both in one transaction sent whole: one query on the wire.
    expect(counting.sent.count).toBe(1);
    expect(await bodiesOf("<m1@s.test>")).toBe(0);
    // Two recipients: the first end asks whether the other row is pending, and keeps the body.
    counting.counts.clear();
    await queue.markSent(first, { attempts: 1, now: 202 });
    expect(counting.counts.get("SelectQueryNode")).toBe(2);
    expect(counting.counts.get("DeleteQueryNode")).toBeUndefined();
    expect(await bodiesOf("<m2@s.test>")).toBe(2);
    await queue.markSent(second, { attempts: 1, now: 203 });
    expect(await bodiesOf("<m2@s.test>")).toBe(0);
  });
});
