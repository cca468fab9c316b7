import { readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SPOOL_DIR_NAME } from "../../src/queue/spool-store.js";
import type { SendRelay } from "../submission/send-harness.js";
import { asyncRelay, queueOf, UNLIMITED } from "./async-relay.js";
import { mountTinyTmpfs } from "./tiny-tmpfs.js";

const spoolDir = (relay: SendRelay) => join(relay.relay.env.dbDir, SPOOL_DIR_NAME);
const spoolFiles = async (relay: SendRelay) =>
  (await readdir(spoolDir(relay)).catch(() => [])).filter((name) => name.endsWith(".eml"));
const tick = async (relay: SendRelay) => {
  const response = await relay.relay.admin("POST", "/queue/tick");
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as Record<string, unknown>;
};

describe("asynchronous mode", () => {
  let setup: Awaited<ReturnType<typeof asyncRelay>>;
  beforeAll(async () => {
    setup = await asyncRelay();
  });
  afterAll(() => setup.relay.close());
  const auth = () => ({ authorization: setup.client.authorization });

  it("answers /send with 202 and enfileirado per recipient, delivers nothing until a tick", async () => {
    const { relay } = setup;
    const response = await relay.post(
      "/send",
      {
        from: "Shop <a@shop.test>",
        to: ["x@dest.test", "y@dest.test"],
        subject: "queued",
        text: "hello",
      },
      auth(),
    );
    expect(response.statusCode).toBe(202);
    const body = response.json() as { message_id: string; results: unknown[] };
    expect(body.message_id).toMatch(/^<.+@shop\.test>$/);
    expect(body.results).toEqual([
      { to: "x@dest.test", ok: true, detail: "enfileirado" },
      { to: "y@dest.test", ok: true, detail: "enfileirado" },
    ]);
    const rows = await queueOf(relay, `?message_id=${encodeURIComponent(body.message_id)}`);
    expect(rows.map((row) => [row.rcpt, row.estado, row.attempts, row.client_id])).toEqual([
      ["y@dest.test", "queued", 0, setup.client.clientId],
      ["x@dest.test", "queued", 0, setup.client.clientId],
    ]);
    expect(await spoolFiles(relay)).toHaveLength(2);
    expect(relay.sinks["dest.test"]!.messages).toHaveLength(0);

    expect(await tick(relay)).toEqual({
      ok: true,
      ocupado: false,
      tentados: 2,
      entregues: 2,
      falhos: 0,
      reagendados: 0,
    });
    const received = relay.sinks["dest.test"]!.messages.filter((mail) =>
      mail.raw.includes(body.message_id),
    );
    expect(received.map((mail) => mail.envelope.to[0]).sort()).toEqual([
      "x@dest.test",
      "y@dest.test",
    ]);
    // Signed once, when accepted: what left the queue carries a signature that verifies.
    const [dkim] = await relay.verifyDkim(received[0]!.raw);
    expect(dkim?.status.result).toBe("pass");
    expect(received[0]!.raw.toString().match(/^DKIM-Signature:/gim)).toHaveLength(1);
    expect(
      (await queueOf(relay, `?message_id=${encodeURIComponent(body.message_id)}`)).map(
        (row) => row.estado,
      ),
    ).toEqual(["sent", "sent"]);
    expect(await spoolFiles(relay)).toEqual([]);
  });

  it("answers /send-raw with 202 too and delivers the message as given", async () => {
    const { relay } = setup;
    const raw =
      "From: a@shop.test\r\nTo: z@dest.test\r\nSubject: raw\r\nX-Custom: kept\r\nMessage-ID: <raw-1@shop.test>\r\n\r\nbody\r\n";
    const response = await relay.post(
      "/send-raw",
      { from: "a@shop.test", to: ["z@dest.test"], raw },
      auth(),
    );
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({
      message_id: "<raw-1@shop.test>",
      results: [{ to: "z@dest.test", ok: true, detail: "enfileirado" }],
    });
    expect(await tick(relay)).toMatchObject({ entregues: 1 });
    const mail = relay.sinks["dest.test"]!.messages.find((m) =>
      m.raw.includes("<raw-1@shop.test>"),
    );
    expect(mail?.raw.toString()).toContain("X-Custom: kept");
  });

  it("emits the ledger trail of queue attempts: attempt, deferred with next_wait_s, failed", async () => {
    const { relay, clock } = setup;
    const response = await relay.post(
      "/send",
      { from: "a@shop.test", to: ["g@busy.test"], subject: "s", text: "t" },
      auth(),
    );
    const messageId = (response.json() as { message_id: string }).message_id;
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect(await tick(relay)).toMatchObject({ tentados: 1 });
      clock.advance(4 * 3600 * 1000);
    }
    const trail = relay.ledger().filter((event) => event.message_id === messageId);
    expect(
      trail.filter((event) => event.event === "attempt").map((event) => event.attempt),
    ).toEqual([1, 2, 3, 4, 5]);
    expect(
      trail.filter((event) => event.event === "deferred").map((event) => event.next_wait_s),
    ).toEqual([60, 300, 900, 3600]);
    expect(trail.at(-1)).toMatchObject({ event: "failed", rcpt: "g@busy.test", permanent: false });
    expect((trail.at(-1)?.error as string) ?? "").toMatch(/^451\b.*greylisted/);
    const [row] = await queueOf(relay, `?message_id=${encodeURIComponent(messageId)}`);
    expect(row).toMatchObject({ estado: "failed", attempts: 5 });
    expect(row?.last_error).toMatch(/^451\b/);
  });

  it("refuses a message over 5 MiB with 413 and stores nothing", async () => {
    const { relay } = setup;
    const before = await queueOf(relay, "?limite=500");
    const raw = `From: a@shop.test\r\nSubject: big\r\n\r\n${"a".repeat(76)}\r\n`.padEnd(
      5.5 * 1024 * 1024,
      "b",
    );
    const response = await relay.post(
      "/send-raw",
      { from: "a@shop.test", to: ["x@dest.test"], raw },
      auth(),
    );
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ error: "payload_too_large" });
    expect(response.json().message).toMatch(/5242880/);
    expect(await queueOf(relay, "?limite=500")).toHaveLength(before.length);
    expect(await spoolFiles(relay)).toEqual([]);
  });

  it("gives a refused message's recipients back to the domain quota", async () => {
    const { relay } = setup;
    await relay.addDomain("tight.test", { limits: { per_hour: 1, per_day: 1 } });
    const client = await relay.addClient(["tight.test"]);
    const send = (raw: string) =>
      relay.post(
        "/send-raw",
        { from: "a@tight.test", to: ["x@dest.test"], raw },
        { authorization: client.authorization },
      );
    const oversized = `From: a@tight.test\r\nSubject: big\r\n\r\n`.padEnd(5.5 * 1024 * 1024, "b");
    expect((await send(oversized)).statusCode).toBe(413);
    const accepted = await send("From: a@tight.test\r\nSubject: small\r\n\r\nhello\r\n");
    expect(accepted.statusCode, accepted.body).toBe(202);
    const full = await send("From: a@tight.test\r\nSubject: one too many\r\n\r\nhello\r\n");
    expect(full.statusCode).toBe(429);
    // Both windows are full; the day is what the client must wait for.
    expect(full.json()).toMatchObject({ error: "quota_exceeded", limit: "per_day" });
    expect(await tick(relay)).toMatchObject({ tentados: 1, entregues: 1 });
  });

  it("keeps delivering mail queued before its client and its domain were deleted", async () => {
    const { relay } = setup;
    const client = await relay.addClient(["shop.test"]);
    const response = await relay.post(
      "/send",
      { from: "a@shop.test", to: ["late@dest.test"], subject: "s", text: "t" },
      { authorization: client.authorization },
    );
    expect(response.statusCode).toBe(202);
    expect((await relay.relay.admin("DELETE", `/clients/${client.clientId}`)).statusCode).toBe(200);
    expect((await relay.relay.admin("DELETE", "/domains/shop.test")).statusCode).toBe(200);
    expect(await tick(relay)).toMatchObject({ entregues: 1 });
    const mail = relay.sinks["dest.test"]!.messages.find(
      (m) => m.envelope.to[0] === "late@dest.test",
    );
    expect((await relay.verifyDkim(mail!.raw))[0]?.status.result).toBe("pass");
    await relay.addDomain("shop.test", { limits: UNLIMITED });
  });
});

describe("asynchronous mode when the spool cannot be written", () => {
  let setup: Awaited<ReturnType<typeof asyncRelay>>;
  beforeAll(async () => {
    setup = await asyncRelay();
  });
  afterAll(() => setup.relay.close());
  // The retries: a delivery may still be emptying its file into `<id>.free`.
  afterEach(() => rm(spoolDir(setup.relay), { recursive: true, force: true, maxRetries: 5 }));

  const send = (text = "t") =>
    setup.relay.post(
      "/send",
      { from: "a@shop.test", to: ["x@dest.test", "y@dest.test"], subject: "s", text },
      { authorization: setup.client.authorization },
    );

  it("answers 503 with {error, message} and records no row when the spool is not a directory", async () => {
    // Permission bits do not stop root; a regular file where the directory should be does.
    await writeFile(spoolDir(setup.relay), "not a directory");
    const response = await send();
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      error: "unavailable",
      message: expect.stringMatching(/could not be stored in the queue/),
    });
    expect(await queueOf(setup.relay)).toEqual([]);
    const rejected = setup.relay.ledger().filter((event) => event.event === "rejected");
    expect(rejected.at(-1)).toMatchObject({ reason: "unavailable", http_status: 503 });
  });

  it("answers 503 and leaves neither a row nor a partial file when the disk is full", async (context) => {
    const unmount = await mountTinyTmpfs(spoolDir(setup.relay), 64);
    if (!unmount) return context.skip();
    try {
      const response = await send("x".repeat(200 * 1024));
      expect(response.statusCode).toBe(503);
      expect(response.json().error).toBe("unavailable");
      expect(await queueOf(setup.relay)).toEqual([]);
      expect(await readdir(spoolDir(setup.relay))).toEqual([]);
      // Space for a small message: the queue works again at once.
      expect((await send()).statusCode).toBe(202);
      expect(await queueOf(setup.relay)).toHaveLength(2);
    } finally {
      await unmount();
    }
  });
});
