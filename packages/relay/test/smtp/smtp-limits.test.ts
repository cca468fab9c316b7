import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CLIENTS } from "../../src/smtp/submission-server.js";
import { type Credential, plainToken, type RawSmtp, rfc5322, SmtpRelay } from "./smtp-harness.js";

describe("SMTP submission timeout", () => {
  let relay: SmtpRelay;

  beforeAll(async () => {
    // smtp_timeout_secs bounds each wait for the client; 1 s keeps the test short.
    relay = await SmtpRelay.start({ config: { smtp_timeout_secs: 1 } });
  });
  afterAll(() => relay.close());

  it("closes the connection of a client that stays silent", async () => {
    const raw = await relay.raw();
    expect(await raw.reply()).toMatch(/^220 /);
    const started = Date.now();
    expect(await raw.reply(5000)).toMatch(/^421 /);
    await raw.whenClosed();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

describe("SMTP submission greeting", () => {
  let relay: SmtpRelay;

  beforeAll(async () => {
    relay = await SmtpRelay.start();
  });
  afterAll(() => relay.close());

  it("greets at once, without smtp-server's 100 ms early-talker pause", async () => {
    const started = performance.now();
    for (let n = 0; n < 10; n += 1) {
      const raw = await relay.raw();
      try {
        expect(await raw.reply()).toMatch(/^220 /);
      } finally {
        raw.close();
      }
    }
    // With the pause, ten connections one after the other take at least 1,000 ms.
    expect(performance.now() - started).toBeLessThan(700);
  });
});

describe("SMTP submission connection cap", () => {
  let relay: SmtpRelay;

  beforeAll(async () => {
    relay = await SmtpRelay.start();
  });
  afterAll(() => relay.close());

  it(`serves at most ${MAX_CLIENTS} connections at once`, async () => {
    const open: RawSmtp[] = [];
    try {
      const all = await Promise.all(Array.from({ length: MAX_CLIENTS }, () => relay.raw()));
      open.push(...all);
      for (const reply of await Promise.all(all.map((raw) => raw.reply()))) {
        expect(reply).toMatch(/^220 /);
      }
      const extra = await relay.raw();
      open.push(extra);
      expect(await extra.reply()).toMatch(/^421 .*Too many connected clients/);
      await extra.whenClosed();

      // A place freed is a place taken, once the server has seen the close (bounded wait:
      // until then a newcomer is still refused).
      open.shift()?.close();
      const greetingOfNewcomer = async () => {
        const next = await relay.raw();
        open.push(next);
        return next.reply();
      };
      await expect.poll(greetingOfNewcomer, { timeout: 5_000, interval: 20 }).toMatch(/^220 /);
    } finally {
      for (const raw of open) raw.close();
    }
  });
});

describe("SMTP submission at shutdown", () => {
  let relay: SmtpRelay;
  let shop: Credential;

  beforeAll(async () => {
    ({ relay, shop } = await SmtpRelay.asyncWithShop());
  });
  afterAll(() => relay.close());

  it("finishes the transaction in hand, dismisses idle sessions, then stops", async () => {
    const idle = await relay.raw();
    await idle.reply();
    await idle.command("EHLO idle.test");

    const busy = await relay.raw();
    await busy.reply();
    await busy.command("EHLO busy.test");
    expect(await busy.command(`AUTH PLAIN ${plainToken(shop)}`)).toMatch(/^235 /);
    expect(await busy.command("MAIL FROM:<a@shop.test>")).toMatch(/^250 /);
    expect(await busy.command("RCPT TO:<x@dest.test>")).toMatch(/^250 /);
    expect(await busy.command("DATA")).toMatch(/^354 /);
    const message = rfc5322({ From: "a@shop.test", To: "x@dest.test", Subject: "last one" });
    busy.socket.write(message.slice(0, 20));

    const closing = relay.send.relay.relay.close();
    expect(await idle.reply()).toMatch(/^421 4\.3\.2 /);
    await idle.whenClosed();

    busy.socket.write(`${message.slice(20)}.\r\n`);
    expect(await busy.reply()).toMatch(/^250 2\.0\.0 Ok: queued as </);
    await closing;
    await busy.whenClosed();

    // The message accepted during shutdown was stored: it is there after the restart.
    await relay.send.relay.restart();
    const queue = await relay.send.relay.admin("GET", "/queue?rcpt=x@dest.test");
    expect(queue.json()).toMatchObject({ queue: [{ estado: "queued" }] });
  });
});
