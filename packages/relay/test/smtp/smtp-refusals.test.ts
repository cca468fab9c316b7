import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SPOOL_DIR_NAME } from "../../src/queue/spool-store.js";
import { type Credential, plainToken, rfc5322, SmtpRelay } from "./smtp-harness.js";

const UNLIMITED = { per_hour: 0, per_day: 0 };
// Small enough for a test message to go over it.
const MAX_SIZE = 4096;

/** The reply line of a refused send. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = (await promise.then(
    () => {
      throw new Error("the message was accepted");
    },
    (caught: unknown) => caught,
  )) as { response?: string };
  return error.response ?? String(error);
}

describe("SMTP submission: refusals", () => {
  let relay: SmtpRelay;
  let shop: Credential;

  beforeAll(async () => {
    relay = await SmtpRelay.start({
      sinks: { "dest.test": { tls: "none" } },
      config: { smtp_max_size: MAX_SIZE, tick_interval_secs: 0 },
    });
    await relay.send.addDomain("shop.test", { limits: UNLIMITED });
    await relay.send.addDomain("other.test", { limits: UNLIMITED });
    await relay.send.addDomain("pending.test", { status: "pending" });
    await relay.send.addDomain("small.test", { limits: { per_hour: 2, per_day: 100 } });
    await relay.send.addDomain("gone.test");
    shop = await relay.addClient(["shop.test", "pending.test", "small.test", "gone.test"]);
    const removed = await relay.send.relay.admin("DELETE", "/domains/gone.test");
    expect(removed.statusCode).toBe(200);
  });
  afterAll(() => relay.close());

  /** Sends one message as `shop` over STARTTLS; resolves with the final reply. */
  async function submit(from: string, to: string[], raw: string): Promise<string> {
    const smtp = await relay.client();
    await smtp.login(shop);
    try {
      return await smtp.send({ from, to }, raw);
    } finally {
      smtp.close();
    }
  }

  const message = (from: string, extra: Record<string, string | string[]> = {}) =>
    rfc5322({ From: from, To: "x@dest.test", Subject: "hi", ...extra });

  it("answers 550 5.7.1 at MAIL FROM for a domain not on the client's list", async () => {
    const reply = await refusal(submit("a@other.test", ["x@dest.test"], message("a@other.test")));
    expect(reply).toBe("550 5.7.1 this client may not send for other.test");
    expect(relay.rejections().at(-1)).toEqual({
      event: "rejected",
      message_id: "-",
      reason: "domain_not_allowed",
      smtp_code: 550,
    });
  });

  it("checks the client's list before the configuration: an unknown domain is not allowed either", async () => {
    const reply = await refusal(
      submit("a@nowhere.test", ["x@dest.test"], message("a@nowhere.test")),
    );
    expect(reply).toMatch(/^550 5\.7\.1 this client may not send for nowhere\.test/);
    expect(relay.rejections().at(-1)).toMatchObject({ reason: "domain_not_allowed" });
  });

  it("answers 550 5.7.1 when the From header's domain differs from the envelope", async () => {
    const reply = await refusal(submit("a@shop.test", ["x@dest.test"], message("b@other.test")));
    expect(reply).toMatch(/^550 5\.7\.1 /);
    expect(relay.rejections().at(-1)).toMatchObject({ reason: "from_mismatch", smtp_code: 550 });
  });

  it("answers 550 5.7.1 for a pending domain", async () => {
    const reply = await refusal(
      submit("a@pending.test", ["x@dest.test"], message("a@pending.test")),
    );
    expect(reply).toMatch(/^550 5\.7\.1 /);
    expect(relay.rejections().at(-1)).toMatchObject({ reason: "domain_pending", smtp_code: 550 });
  });

  it("answers 550 5.7.1 for a domain without a DKIM kit", async () => {
    const reply = await refusal(submit("a@gone.test", ["x@dest.test"], message("a@gone.test")));
    expect(reply).toMatch(/^550 5\.7\.1 gone\.test has no DKIM kit/);
    expect(relay.rejections().at(-1)).toMatchObject({ reason: "no_dkim_kit", smtp_code: 550 });
  });

  it("answers 552 5.3.4 to a message over smtp_max_size, after reading all of it", async () => {
    const big = message("a@shop.test", {}).replace("hello", "x".repeat(MAX_SIZE * 4));
    const reply = await refusal(submit("a@shop.test", ["x@dest.test"], big));
    expect(reply).toBe(`552 5.3.4 Message size exceeds the limit of ${MAX_SIZE} bytes`);
    expect(relay.rejections().at(-1)).toMatchObject({
      reason: "payload_too_large",
      smtp_code: 552,
    });
    // The session goes on: the next message is accepted.
    expect(await submit("a@shop.test", ["x@dest.test"], message("a@shop.test"))).toMatch(/^250 /);
  });

  it("answers 554 5.6.0 to a repeated signed header", async () => {
    const raw = message("a@shop.test", { Subject: ["one", "two"] });
    const reply = await refusal(submit("a@shop.test", ["x@dest.test"], raw));
    expect(reply).toMatch(/^554 5\.6\.0 the Subject header appears more than once/);
    expect(relay.rejections().at(-1)).toMatchObject({ reason: "repeated_header", smtp_code: 554 });
  });

  it("answers 452 4.7.1 when the domain's quota is full, counting recipients", async () => {
    // small.test takes 2 recipients an hour: 3 at once are refused whole, 2 pass, then 1 more fails.
    const three = ["x@dest.test", "y@dest.test", "z@dest.test"];
    const tooMany = await refusal(submit("a@small.test", three, message("a@small.test")));
    expect(tooMany).toMatch(/^452 4\.7\.1 the per_hour quota of small\.test is used up/);
    const event = relay.rejections().at(-1);
    expect(event).toMatchObject({ reason: "quota_exceeded", smtp_code: 452 });
    // The message was received before the quota refused it: the rejection names it.
    expect(event?.message_id).toMatch(/^<.+@small\.test>$/);
    expect(await submit("a@small.test", three.slice(0, 2), message("a@small.test"))).toMatch(
      /^250 /,
    );
    expect(await refusal(submit("a@small.test", ["x@dest.test"], message("a@small.test")))).toMatch(
      /^452 4\.7\.1 /,
    );
  });

  it("answers 553 5.1.3 to a recipient the relay cannot deliver to (an address literal)", async () => {
    const raw = await relay.raw();
    await raw.reply();
    await raw.command("EHLO client.test");
    expect(await raw.command(`AUTH PLAIN ${plainToken(shop)}`)).toMatch(/^235 /);
    expect(await raw.command("MAIL FROM:<a@shop.test>")).toMatch(/^250 /);
    expect(await raw.command("RCPT TO:<x@[127.0.0.1]>")).toBe(
      "553 5.1.3 Recipient address is not valid",
    );
    expect(await raw.command("RCPT TO:<x@dest.test>")).toMatch(/^250 /);
    raw.close();
  });

  it("stores nothing when the client leaves in the middle of DATA", async () => {
    const received = () => relay.send.ledger().filter((event) => event.event === "received");
    const before = received().length;
    const raw = await relay.raw();
    await raw.reply();
    await raw.command("EHLO client.test");
    expect(await raw.command(`AUTH PLAIN ${plainToken(shop)}`)).toMatch(/^235 /);
    expect(await raw.command("MAIL FROM:<a@shop.test>")).toMatch(/^250 /);
    expect(await raw.command("RCPT TO:<x@dest.test>")).toMatch(/^250 /);
    expect(await raw.command("DATA")).toMatch(/^354 /);
    raw.socket.write("From: a@shop.test\r\nSubject: cut\r\n\r\nhal");
    raw.close();
    await expect
      .poll(() => relay.send.relay.logs.forTarget("relay::smtp").map((line) => line.fields))
      .toContainEqual(expect.objectContaining({ message: "message not received in full" }));
    expect(received()).toHaveLength(before);
  });

  it("answers 451 4.3.0 when the message cannot be persisted, and stores nothing", async () => {
    const spool = join(relay.send.relay.env.dbDir, SPOOL_DIR_NAME);
    // Permission bits do not stop root; a regular file where the directory should be does.
    // The retries: an earlier test's delivery may still be emptying its file into `<id>.free`.
    await rm(spool, { recursive: true, force: true, maxRetries: 5 });
    await writeFile(spool, "not a directory");
    try {
      const reply = await refusal(
        submit("a@shop.test", ["lost@dest.test"], message("a@shop.test")),
      );
      expect(reply).toBe("451 4.3.0 Local error: the message was not accepted, retry later");
      expect(relay.rejections().at(-1)).toMatchObject({ reason: "unavailable", smtp_code: 451 });
      const queue = await relay.send.relay.admin("GET", "/queue?rcpt=lost@dest.test");
      expect(queue.json()).toEqual({ queue: [] });
    } finally {
      await rm(spool, { force: true });
    }
    // Storage back: the same message is accepted.
    expect(await submit("a@shop.test", ["x@dest.test"], message("a@shop.test"))).toMatch(/^250 /);
  });
});
