import { unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createLogging } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { afterEach, describe, expect, it } from "vitest";
import { LOST_AT_BOOT, recoverQueue } from "../../src/queue/queue-recovery.js";
import { queueRow } from "../helpers/state-rows.js";
import { nowSecs, type QueueKit, signedMessage, startQueueKit } from "./queue-kit.js";

let kit: QueueKit;
afterEach(() => kit.close());

const recover = () =>
  recoverQueue({
    queue: kit.queue,
    spool: kit.spool,
    clock: kit.clock,
    logger: createLogging({ destination: new LogCapture() }).forTarget("relay::queue"),
  });

describe("boot recovery", () => {
  it("puts interrupted (sending) entries back in the queue, due now, attempts kept", async () => {
    kit = await startQueueKit({});
    await kit.enqueue(signedMessage(["b@rcpt.test", "c@rcpt.test"]));
    const [second, first] = kit.queue.list({ limit: 10 });
    kit.queue.claim(first!.pk, nowSecs(kit.clock));
    kit.clock.advance(120_000);

    expect(await recover()).toEqual({ requeued: 1, failed: 0, orphansRemoved: 0 });
    expect(queueRow(kit.db, first!.pk)).toMatchObject({
      estado: "queued",
      next_attempt_at: nowSecs(kit.clock),
      attempts: 0,
    });
    expect(queueRow(kit.db, second!.pk)).toMatchObject({
      estado: "queued",
      next_attempt_at: nowSecs(kit.clock) - 120,
    });
    expect(await kit.spool.list()).toHaveLength(2);
  });

  it("removes spool files no pending row names", async () => {
    kit = await startQueueKit({});
    await kit.enqueue(signedMessage(["b@rcpt.test"]));
    const [kept] = await kit.spool.list();
    // A crash after the file was written but before its row committed.
    const orphan = "0123456789abcdef0123456789abcdef.eml";
    await writeFile(join(kit.spool.dir, orphan), "orphan");
    // A crash after a row finished but before its file was deleted.
    const [finished] = await kit.spool.store(Buffer.from("done"), 1);
    const [pk] = kit.queue.insert(
      [
        {
          message_id: "<m@x>",
          client_id: null,
          envelope_from: "a@sender.test",
          rcpt: "d@rcpt.test",
          estado: "queued",
          next_attempt_at: 0,
          spool_file: finished!,
        },
      ],
      0,
    );
    kit.queue.markSent(pk!, { attempts: 1, now: 0 });
    // Not ours: left alone.
    await writeFile(join(kit.spool.dir, "notes.txt"), "keep");

    expect(await recover()).toEqual({ requeued: 0, failed: 0, orphansRemoved: 2 });
    expect(await kit.spool.list()).toEqual([kept]);
  });

  it("fails entries whose spool file is missing, saying so, and synchronous rows caught by a crash", async () => {
    kit = await startQueueKit({});
    await kit.enqueue(signedMessage(["lost@rcpt.test", "kept@rcpt.test"]));
    const rows = kit.queue.list({ limit: 10 });
    const lost = rows.find((row) => row.rcpt === "lost@rcpt.test")!;
    await unlink(join(kit.spool.dir, queueRow(kit.db, lost.pk)!.spool_file!));
    // A synchronous delivery in flight when the process died: no spool file by design.
    const [sync] = kit.queue.insert(
      [
        {
          message_id: "<s@x>",
          client_id: null,
          envelope_from: "a@sender.test",
          rcpt: "sync@rcpt.test",
          estado: "sending",
          next_attempt_at: 0,
        },
      ],
      0,
    );

    expect(await recover()).toEqual({ requeued: 0, failed: 2, orphansRemoved: 0 });
    for (const pk of [lost.pk, sync!]) {
      expect(queueRow(kit.db, pk)).toMatchObject({
        estado: "failed",
        last_error: LOST_AT_BOOT,
        finished_at: nowSecs(kit.clock),
      });
    }
    expect(kit.queue.list({ limit: 10, estado: "queued" }).map((row) => row.rcpt)).toEqual([
      "kept@rcpt.test",
    ]);
  });

  it("leaves finished rows as they are", async () => {
    kit = await startQueueKit({});
    const [pk] = kit.queue.insert(
      [
        {
          message_id: "<f@x>",
          client_id: null,
          envelope_from: "a@sender.test",
          rcpt: "f@rcpt.test",
          estado: "sending",
          next_attempt_at: 0,
        },
      ],
      0,
    );
    kit.queue.markFailed(pk!, { attempts: 2, lastError: "550 no", now: 5 });
    expect(await recover()).toEqual({ requeued: 0, failed: 0, orphansRemoved: 0 });
    expect(queueRow(kit.db, pk!)).toMatchObject({
      estado: "failed",
      last_error: "550 no",
      finished_at: 5,
    });
  });
});
