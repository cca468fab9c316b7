import { createLogging } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { afterEach, describe, expect, it } from "vitest";
import { createQueueIntake } from "../../src/queue/queue-intake.js";
import { TICK_CONCURRENCY } from "../../src/queue/queue-worker.js";
import { type SmtpSink, startSmtpSink } from "../fixtures/smtp-sink.js";
import { type QueueKit, signedMessage, startQueueKit } from "./queue-kit.js";

// The intake's hand-over to the worker (what a relay on the shared database does): a message's
// entries written already claimed, attempted at once with the body in hand, no tick and no
// claim; without room, or with a send delay, written `queued` as before.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function handingKit(extra: Record<string, unknown> = {}) {
  const mx: SmtpSink = await startSmtpSink({ tls: "none" });
  cleanups.push(() => mx.close());
  const kit: QueueKit = await startQueueKit({
    mx_override: { "rcpt.test": [mx.address] },
    smtp_timeout_secs: 2,
    ...extra,
  });
  cleanups.push(() => kit.close());
  const logger = createLogging({ destination: new LogCapture() }).forTarget("relay::queue");
  let woken = 0;
  const enqueue = createQueueIntake({
    queue: kit.queue,
    spool: kit.spool,
    clock: kit.clock,
    logger,
    handOver: kit.worker.handOver,
    onQueued: () => {
      woken += 1;
    },
  });
  return { mx, kit, enqueue, woken: () => woken };
}

const states = (kit: QueueKit) => kit.queue.list({ limit: 500 }).map((row) => row.estado);

describe("queue hand-over from the intake", () => {
  it("writes the entries claimed and delivers them at once, without a tick or a wake-up", async () => {
    const { mx, kit, enqueue, woken } = await handingKit();
    const message = signedMessage(["a@rcpt.test", "b@rcpt.test"]);
    await enqueue(message);
    // Answered before any attempt started: the rows were written `sending`, never `queued`.
    expect(states(kit)).toEqual(["sending", "sending"]);
    await mx.waitForMessages(2, 5_000);
    await expect.poll(() => states(kit)).toEqual(["sent", "sent"]);
    expect(mx.messages.map((mail) => mail.raw)).toEqual([message.message, message.message]);
    expect(await kit.spool.list()).toEqual([]);
    expect(woken()).toBe(0);
    expect(kit.events.filter((event) => event.event === "delivered")).toHaveLength(2);
  });

  it("with a send delay, writes the entries queued for the worker's gated drain", async () => {
    const { kit, enqueue, woken } = await handingKit({ send_delay_secs: 5 });
    await enqueue(signedMessage(["a@rcpt.test"]));
    expect(states(kit)).toEqual(["queued"]);
    expect(woken()).toBe(1);
  });

  it("a message with more recipients than the worker takes at once is queued", async () => {
    const { kit, enqueue } = await handingKit();
    const many = Array.from({ length: TICK_CONCURRENCY + 1 }, (_, index) => `r${index}@rcpt.test`);
    await enqueue(signedMessage(many));
    expect(new Set(states(kit))).toEqual(new Set(["queued"]));
  });

  it("once the worker stops it hands nothing over, and stop waits for the attempts in hand", async () => {
    const { mx, kit, enqueue } = await handingKit();
    await enqueue(signedMessage(["a@rcpt.test"]));
    await kit.worker.stop();
    expect(mx.messages).toHaveLength(1);
    expect(states(kit)).toEqual(["sent"]);
    await enqueue(signedMessage(["b@rcpt.test"]));
    expect(states(kit)).toEqual(["queued", "sent"]);
  });
});
