import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Credential, rfc5322, SmtpRelay } from "./smtp-harness.js";

const UNLIMITED = { per_hour: 0, per_day: 0 };

/** The message_id a `250` reply carries (`250 2.0.0 Ok: queued as <id@domain>`). */
function queuedId(reply: string): string {
  const match = /^250 2\.0\.0 Ok: queued as (<[^>]+>)$/.exec(reply);
  if (!match?.[1]) throw new Error(`not an acceptance: ${reply}`);
  return match[1];
}

async function queueOf(relay: SmtpRelay, messageId: string) {
  const response = await relay.send.relay.admin(
    "GET",
    `/queue?message_id=${encodeURIComponent(messageId)}`,
  );
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { queue: Array<Record<string, unknown>> }).queue;
}

describe("SMTP submission in synchronous mode", () => {
  let relay: SmtpRelay;
  let shop: Credential;

  beforeAll(async () => {
    // The internal ticker is off: only the port itself can have delivered what arrives.
    relay = await SmtpRelay.start({
      // stall.test reads the message and never answers: only the 2 s step timeout ends it.
      sinks: { "dest.test": { tls: "none" }, "stall.test": { tls: "none", stall: "data" } },
      config: { tick_interval_secs: 0, smtp_timeout_secs: 2 },
    });
    await relay.send.addDomain("shop.test", { limits: UNLIMITED });
    shop = await relay.addClient(["shop.test"]);
  });
  afterAll(() => relay.close());

  it("answers 250 without waiting for the remote server, which it then tries in the background", async () => {
    const smtp = await relay.client();
    await smtp.login(shop);
    const messageId = queuedId(
      await smtp.send(
        { from: "a@shop.test", to: ["x@stall.test"] },
        rfc5322({ From: "a@shop.test", To: "x@stall.test", Subject: "slow" }),
      ),
    );
    const events = () =>
      relay.send
        .ledger()
        .filter((event) => event.message_id === messageId)
        .map((event) => event.event);
    // The 250 came while the attempt was still waiting for the stalled server (order, not time).
    expect(events()).not.toContain("deferred");
    smtp.quit();
    await expect.poll(events, { timeout: 8000 }).toContain("deferred");
    expect(await queueOf(relay, messageId)).toMatchObject([{ estado: "queued", attempts: 1 }]);
  });

  it("persists the message, answers 250 with its message_id, then delivers it DKIM-signed", async () => {
    const smtp = await relay.client();
    expect(smtp.secure).toBe(true);
    await smtp.login(shop, "PLAIN");
    const raw = rfc5322(
      { From: "Shop <news@shop.test>", To: "x@dest.test", Subject: "over SMTP" },
      "Hello from the submission port.\r\n",
    );
    const reply = await smtp.send({ from: "news@shop.test", to: ["x@dest.test"] }, raw);
    smtp.quit();
    const messageId = queuedId(reply);
    expect(messageId).toMatch(/@shop\.test>$/);

    const [mail] = await relay.send.sinks["dest.test"]!.waitForMessages(1);
    expect(mail?.envelope).toEqual({ from: "news@shop.test", to: ["x@dest.test"] });
    const text = mail?.raw.toString() ?? "";
    expect(text).toContain("Subject: over SMTP");
    expect(text).toContain(`Message-ID: ${messageId}`);
    const [dkim] = await relay.send.verifyDkim(mail?.raw ?? Buffer.alloc(0));
    expect(dkim?.status.result).toBe("pass");
    expect(dkim?.signingDomain).toBe("shop.test");

    // The same trail as /send-raw, on one message_id, and the row of the queue it went through.
    const trail = relay.send
      .ledger()
      .filter((event) => event.message_id === messageId)
      .map((event) => event.event);
    expect(trail).toEqual(expect.arrayContaining(["received", "signed", "delivered"]));
    expect(trail.indexOf("received")).toBeLessThan(trail.indexOf("signed"));
    const rows = await queueOf(relay, messageId);
    expect(rows).toMatchObject([{ rcpt: "x@dest.test", estado: "sent", client_id: shop.user }]);
  });

  it("takes several messages in one session, one delivery per recipient", async () => {
    const smtp = await relay.client();
    await smtp.login(shop, "LOGIN");
    const first = queuedId(
      await smtp.send(
        { from: "a@shop.test", to: ["y@dest.test", "z@dest.test"] },
        rfc5322({ From: "a@shop.test", To: "y@dest.test, z@dest.test", Subject: "first" }),
      ),
    );
    const second = queuedId(
      await smtp.send(
        { from: "a@shop.test", to: ["y@dest.test"] },
        rfc5322({ From: "a@shop.test", To: "y@dest.test", Subject: "second" }),
      ),
    );
    smtp.quit();
    expect(first).not.toBe(second);
    const sink = relay.send.sinks["dest.test"]!;
    const mails = await sink.waitForMessages(4);
    const subjects = mails
      .slice(1)
      .map((mail) => /^Subject: (\w+)/m.exec(mail.raw.toString())?.[1]);
    expect(subjects.sort()).toEqual(["first", "first", "second"]);
    const states = async (id: string) => (await queueOf(relay, id)).map((row) => row.estado);
    await expect.poll(() => states(first)).toEqual(["sent", "sent"]);
    await expect.poll(() => states(second)).toEqual(["sent"]);
  });
});

describe("SMTP submission in asynchronous mode", () => {
  let relay: SmtpRelay;
  let shop: Credential;

  beforeAll(async () => {
    ({ relay, shop } = await SmtpRelay.asyncWithShop());
  });
  afterAll(() => relay.close());

  it("keeps an accepted message across a restart and delivers it at the next tick", async () => {
    const smtp = await relay.client();
    await smtp.login(shop);
    const raw = rfc5322({ From: "a@shop.test", To: "x@dest.test", Subject: "survives" });
    const messageId = queuedId(await smtp.send({ from: "a@shop.test", to: ["x@dest.test"] }, raw));
    smtp.quit();
    expect(await queueOf(relay, messageId)).toMatchObject([{ estado: "queued" }]);
    const sink = relay.send.sinks["dest.test"]!;
    expect(sink.messages).toHaveLength(0);

    await relay.send.relay.restart();
    const tick = await relay.send.relay.admin("POST", "/queue/tick");
    expect(tick.json()).toMatchObject({ tentados: 1, entregues: 1 });
    const [mail] = await sink.waitForMessages(1);
    expect(mail?.raw.toString()).toContain(`Message-ID: ${messageId}`);
    const [dkim] = await relay.send.verifyDkim(mail?.raw ?? Buffer.alloc(0));
    expect(dkim?.status.result).toBe("pass");
    expect(await queueOf(relay, messageId)).toMatchObject([{ estado: "sent" }]);
  });
});
