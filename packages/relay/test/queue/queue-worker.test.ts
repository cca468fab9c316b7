import { mkdir, readFile, rmdir, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SPOOL_FILE_MISSING } from "../../src/queue/entry-attempt.js";
import { type SmtpSink, type SmtpSinkOptions, startSmtpSink } from "../fixtures/smtp-sink.js";
import { queueRow } from "../helpers/state-rows.js";
import { nowSecs, type QueueKit, signedMessage, startQueueKit } from "./queue-kit.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const started = await startSmtpSink({ tls: "none", ...options });
  cleanups.push(() => started.close());
  return started;
}

/** A queue whose recipients at `rcpt.test` are delivered to `mx`. */
async function kitFor(mx: SmtpSink, extra: Record<string, unknown> = {}): Promise<QueueKit> {
  const kit = await startQueueKit({
    mx_override: { "rcpt.test": [mx.address] },
    smtp_timeout_secs: 2,
    ...extra,
  });
  cleanups.push(() => kit.close());
  return kit;
}

const rowsOf = (kit: QueueKit) => kit.queue.list({ limit: 500 });

describe("queue worker: transitions", () => {
  it("queued → sending → sent: delivers the stored bytes, empties the spool, logs the attempt", async () => {
    const mx = await sink();
    const kit = await kitFor(mx);
    const message = signedMessage(["b@rcpt.test"]);
    const results = await kit.enqueue(message);
    expect(results).toEqual([{ to: "b@rcpt.test", ok: true, detail: "enfileirado" }]);
    const [queued] = rowsOf(kit);
    expect(queued).toMatchObject({
      estado: "queued",
      attempts: 0,
      next_attempt_at: nowSecs(kit.clock),
    });
    expect(await kit.spool.list()).toHaveLength(1);

    const report = await kit.worker.tick();
    expect(report).toEqual({
      ok: true,
      ocupado: false,
      tentados: 1,
      entregues: 1,
      falhos: 0,
      reagendados: 0,
    });
    expect(mx.messages).toHaveLength(1);
    expect(mx.messages[0]?.raw).toEqual(message.message);
    expect(mx.messages[0]?.envelope).toEqual({ from: "a@sender.test", to: ["b@rcpt.test"] });
    expect(queueRow(kit.db, queued!.pk)).toMatchObject({
      estado: "sent",
      attempts: 1,
      finished_at: nowSecs(kit.clock),
    });
    expect(await kit.spool.list()).toEqual([]);
    expect(kit.events.map((event) => event.event)).toEqual(["mx_resolved", "attempt", "delivered"]);
    expect(kit.events[2]).toMatchObject({
      message_id: message.messageId,
      rcpt: "b@rcpt.test",
      host: mx.address,
      attempt: 1,
      tls: false,
    });
  });

  it("takes due entries oldest first, and one entry per recipient", async () => {
    const mx = await sink();
    const kit = await kitFor(mx);
    const first = signedMessage(["one@rcpt.test", "two@rcpt.test"]);
    await kit.enqueue(first);
    kit.clock.advance(1000);
    const second = signedMessage(["three@rcpt.test"]);
    await kit.enqueue(second);
    kit.configure({ mx_override: { "rcpt.test": [mx.address] }, send_delay_secs: 0.01 });
    // The gate spaces the attempts on the kit's clock.
    const report = await kit.clock.settle(kit.worker.tick());
    expect(report.entregues).toBe(3);
    expect(mx.messages.map((mail) => mail.envelope.to[0])).toEqual([
      "one@rcpt.test",
      "two@rcpt.test",
      "three@rcpt.test",
    ]);
  });

  it("leaves an entry that is not due yet alone", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 451, times: 1 } });
    const kit = await kitFor(mx);
    await kit.enqueue(signedMessage(["b@rcpt.test"]));
    expect((await kit.worker.tick()).reagendados).toBe(1);
    kit.clock.advance(59_000);
    expect(await kit.worker.tick()).toMatchObject({ tentados: 0 });
    kit.clock.advance(1_000);
    expect(await kit.worker.tick()).toMatchObject({ tentados: 1, entregues: 1 });
  });

  it("a temporary failure reschedules (queued, later next_attempt_at, last_error kept, body kept)", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 451, message: "try later", times: 1 } });
    const kit = await kitFor(mx);
    const message = signedMessage(["b@rcpt.test"]);
    await kit.enqueue(message);
    const report = await kit.worker.tick();
    expect(report).toEqual({
      ok: true,
      ocupado: false,
      tentados: 1,
      entregues: 0,
      falhos: 0,
      reagendados: 1,
    });
    const [row] = rowsOf(kit);
    expect(row).toMatchObject({
      estado: "queued",
      attempts: 1,
      next_attempt_at: nowSecs(kit.clock) + 60,
    });
    expect(row?.last_error).toMatch(/^451\b.*try later/);
    expect(await kit.spool.list()).toHaveLength(1);
    expect(kit.events.at(-1)).toMatchObject({
      event: "deferred",
      message_id: message.messageId,
      rcpt: "b@rcpt.test",
      host: mx.address,
      tls: false,
      next_wait_s: 60,
    });
  });

  it("follows queue_backoff_secs and fails when the 5th attempt fails, keeping last_error", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 421, message: "busy" } });
    const kit = await kitFor(mx, { queue_backoff_secs: [2, 4, 6, 8, 10] });
    await kit.enqueue(signedMessage(["b@rcpt.test"]));
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      const before = nowSecs(kit.clock);
      expect(await kit.worker.tick()).toMatchObject({ tentados: 1, reagendados: 1 });
      const [row] = rowsOf(kit);
      expect(row).toMatchObject({ estado: "queued", attempts: attempt });
      waits.push(row!.next_attempt_at - before);
      kit.clock.advance((row!.next_attempt_at - before) * 1000);
    }
    expect(waits).toEqual([2, 4, 6, 8]);
    expect(await kit.worker.tick()).toMatchObject({ tentados: 1, falhos: 1, reagendados: 0 });
    const [row] = rowsOf(kit);
    expect(row).toMatchObject({ estado: "failed", attempts: 5 });
    expect(row?.last_error).toMatch(/^421\b.*busy/);
    expect(await kit.spool.list()).toEqual([]);
    expect(
      kit.events
        .filter((event) => event.event === "deferred")
        .map((event) => "next_wait_s" in event && event.next_wait_s),
    ).toEqual([2, 4, 6, 8]);
    expect(kit.events.at(-1)).toMatchObject({ event: "failed", permanent: false });
    // Nothing is left to do.
    kit.clock.advance(3_600_000);
    expect(await kit.worker.tick()).toMatchObject({ tentados: 0 });
  });

  it("uses the default schedule of 1 min, 5 min, 15 min and 1 h", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 450 } });
    const kit = await kitFor(mx);
    await kit.enqueue(signedMessage(["b@rcpt.test"]));
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      const before = nowSecs(kit.clock);
      await kit.worker.tick();
      const [row] = rowsOf(kit);
      if (row?.estado !== "queued") break;
      waits.push(row.next_attempt_at - before);
      kit.clock.advance((row.next_attempt_at - before) * 1000);
    }
    expect(waits).toEqual([60, 300, 900, 3600]);
    expect(rowsOf(kit)[0]).toMatchObject({ estado: "failed", attempts: 5 });
  });

  it("a permanent 5xx fails at once", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 550, message: "no such user" } });
    const kit = await kitFor(mx);
    await kit.enqueue(signedMessage(["b@rcpt.test"]));
    expect(await kit.worker.tick()).toEqual({
      ok: true,
      ocupado: false,
      tentados: 1,
      entregues: 0,
      falhos: 1,
      reagendados: 0,
    });
    const [row] = rowsOf(kit);
    expect(row).toMatchObject({ estado: "failed", attempts: 1 });
    expect(row?.last_error).toMatch(/^550\b.*no such user/);
    expect(await kit.spool.list()).toEqual([]);
    expect(kit.events.at(-1)).toMatchObject({ event: "failed", permanent: true });
  });

  it("an entry whose spool file vanished fails, saying so", async () => {
    const mx = await sink();
    const kit = await kitFor(mx);
    await kit.enqueue(signedMessage(["b@rcpt.test"]));
    const [file] = await kit.spool.list();
    await unlink(join(kit.spool.dir, file!));
    expect(await kit.worker.tick()).toMatchObject({ tentados: 1, falhos: 1 });
    expect(rowsOf(kit)[0]).toMatchObject({ estado: "failed", last_error: SPOOL_FILE_MISSING });
    expect(mx.messages).toHaveLength(0);
  });

  it("a local failure leaves the entry queued for the next tick and answers ok: false", async () => {
    const mx = await sink();
    const kit = await kitFor(mx);
    await kit.enqueue(signedMessage(["b@rcpt.test"]));
    const [file] = await kit.spool.list();
    const path = join(kit.spool.dir, file!);
    const body = await readFile(path);
    // Unreadable as a file whoever runs the test: a directory in its place.
    await unlink(path);
    await mkdir(path);
    expect(await kit.worker.tick()).toEqual({
      ok: false,
      ocupado: false,
      tentados: 1,
      entregues: 0,
      falhos: 0,
      reagendados: 0,
    });
    expect(rowsOf(kit)[0]).toMatchObject({ estado: "queued", attempts: 0 });
    expect(rowsOf(kit)[0]?.last_error).toMatch(/^local error: .*EISDIR/);
    expect(kit.logs.lines.some((line) => JSON.stringify(line).includes("stays queued"))).toBe(true);
    await rmdir(path);
    await writeFile(path, body);
    expect(await kit.worker.tick()).toMatchObject({ ok: true, entregues: 1 });
    expect(mx.messages).toHaveLength(1);
  });

  it("delivers whatever the configuration now says about the sender domain (it was authorised when queued)", async () => {
    const mx = await sink();
    const kit = await kitFor(mx);
    await kit.enqueue(signedMessage(["b@rcpt.test"], { clientId: "cli_ffffffffffffffff" }));
    // No domain, no client anywhere: the queue holds the signed message and its envelope.
    expect(kit.config.domains).toEqual({});
    expect(await kit.worker.tick()).toMatchObject({ entregues: 1 });
  });
});

describe("queue worker: retention", () => {
  it("deletes sent and failed rows finished more than retention_days ago, at the next tick", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 550, times: 1 } });
    const kit = await kitFor(mx, { retention_days: 2 });
    await kit.enqueue(signedMessage(["failed@rcpt.test"]));
    await kit.worker.tick();
    await kit.enqueue(signedMessage(["sent@rcpt.test"]));
    await kit.worker.tick();
    kit.clock.advance(86_400_000);
    await kit.enqueue(signedMessage(["recent@rcpt.test"]));
    await kit.worker.tick();
    expect(rowsOf(kit).map((row) => row.estado)).toEqual(["sent", "sent", "failed"]);

    kit.clock.advance(86_400_000);
    await kit.worker.tick();
    expect(rowsOf(kit)).toHaveLength(3);
    kit.clock.advance(1000);
    await kit.worker.tick();
    expect(rowsOf(kit).map((row) => row.rcpt)).toEqual(["recent@rcpt.test"]);
  });

  it("never deletes an entry still to deliver, however old", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 451 } });
    const kit = await kitFor(mx, { retention_days: 1, queue_backoff_secs: [864_000] });
    await kit.enqueue(signedMessage(["b@rcpt.test"]));
    await kit.worker.tick();
    kit.clock.advance(5 * 86_400_000);
    await kit.worker.tick();
    expect(rowsOf(kit)).toMatchObject([{ estado: "queued", attempts: 1 }]);
  });
});

describe("queue worker: reentrancy", () => {
  it("a tick started while another runs answers ocupado and does nothing else", async () => {
    const mx = await sink({ stall: "data" });
    const kit = await kitFor(mx, { smtp_timeout_secs: 1 });
    await kit.enqueue(signedMessage(["b@rcpt.test"]));
    const first = kit.worker.tick();
    await expect.poll(() => rowsOf(kit)[0]?.estado).toBe("sending");
    // Even past retention and with a new due entry, the second tick touches nothing.
    await kit.enqueue(signedMessage(["c@rcpt.test"]));
    const second = await kit.worker.tick();
    expect(second).toEqual({
      ok: true,
      ocupado: true,
      tentados: 0,
      entregues: 0,
      falhos: 0,
      reagendados: 0,
    });
    expect(rowsOf(kit)[0]).toMatchObject({ rcpt: "c@rcpt.test", estado: "queued" });
    expect(await first).toMatchObject({ ocupado: false, tentados: 1, reagendados: 1 });
    expect(rowsOf(kit)[1]?.last_error).toMatch(/timeout|timed out/i);
  });
});
