import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_HEADER_BLOCK_BYTES } from "../../src/submission/header-limit.js";
import { type Credential, SmtpRelay } from "../smtp/smtp-harness.js";

/**
 * Header blocks as an attacker shapes them (tens of thousands of folded lines, a subject the
 * encoder folds into thousands of lines), messages that are all header, and header lines the
 * relay writes: through /send, /send-raw and the SMTP port, to a sink that refuses any line
 * over RFC 5322's 998 octets.
 */

// Generous for a loaded 2-core machine (the whole test process counts: client, relay and sink;
// ~60-250 ms seen, up to ~580 ms for the SMTP case under load), yet far below the seconds the
// quadratic signer took for the smallest pathological message here (40,000 folded lines: ~6 s).
const MAX_STALL_MS = 800;

/** `lines` folded continuation lines of one custom field, about 4 octets each. */
const folded = (lines: number) =>
  `From: a@shop.test\r\nTo: b@dest.test\r\nSubject: folded\r\nX-Junk: a\r\n${" b\r\n".repeat(lines)}\r\nbody\r\n`;

describe("header blocks: bounded, processed in linear time, written within the line limit", () => {
  let relay: SmtpRelay;
  let shop: Credential;
  let authorization: string;

  beforeAll(async () => {
    relay = await SmtpRelay.start({
      sinks: { "dest.test": { tls: "none", strictLines: true } },
      config: { tick_interval_secs: 0 },
    });
    await relay.send.addDomain("shop.test", { limits: { per_hour: 0, per_day: 0 } });
    shop = await relay.addClient(["shop.test"]);
    authorization = `Basic ${Buffer.from(`${shop.user}:${shop.pass}`).toString("base64")}`;
  });
  afterAll(() => relay.close());

  const sink = () => relay.send.sinks["dest.test"]!;

  /**
   * Runs `work` while the relay serves `GET /health` over and over; returns its result, the
   * longest event-loop delay and the slowest `/health` answer seen meanwhile.
   */
  async function whileServingHealth<T>(work: () => Promise<T>) {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let done = false;
    let slowestHealthMs = 0;
    const health = (async () => {
      while (!done) {
        const started = performance.now();
        const response = await relay.send.app.inject({ method: "GET", url: "/health" });
        expect(response.statusCode).toBe(200);
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    try {
      const result = await work();
      return { result, maxDelayMs: delay.max / 1e6, slowestHealthMs };
    } finally {
      done = true;
      await health;
      delay.disable();
    }
  }

  /** Submits over SMTP as `shop`; resolves with the final reply (or the refusal's). */
  async function submitSmtp(raw: string): Promise<string> {
    const smtp = await relay.client();
    try {
      await smtp.login(shop);
      return await smtp.send({ from: "a@shop.test", to: ["b@dest.test"] }, raw);
    } catch (error) {
      return (error as { response?: string }).response ?? String(error);
    } finally {
      smtp.close();
    }
  }

  const sendRaw = (raw: string) =>
    relay.send.post(
      "/send-raw",
      { from: "a@shop.test", to: ["b@dest.test"], raw },
      { authorization },
    );

  it.each([40_000, 120_000, 240_000])(
    "/send-raw with %i folded lines is delivered without stalling other requests",
    async (lines) => {
      const before = sink().messages.length;
      const { result, maxDelayMs, slowestHealthMs } = await whileServingHealth(() =>
        sendRaw(folded(lines)),
      );
      expect(result.statusCode, result.body).toBe(200);
      expect(result.json().results[0]).toMatchObject({ ok: true });
      await sink().waitForMessages(before + 1);
      expect(maxDelayMs).toBeLessThan(MAX_STALL_MS);
      expect(slowestHealthMs).toBeLessThan(MAX_STALL_MS);
    },
  );

  it("SMTP: a message of 240,000 folded lines is accepted without stalling other requests", async () => {
    const before = sink().messages.length;
    const { result, maxDelayMs, slowestHealthMs } = await whileServingHealth(async () => {
      const reply = await submitSmtp(folded(240_000));
      // Synchronous mode: the port's own tick delivers it.
      await sink().waitForMessages(before + 1);
      return reply;
    });
    expect(result).toMatch(/^250 /);
    expect(maxDelayMs).toBeLessThan(MAX_STALL_MS);
    expect(slowestHealthMs).toBeLessThan(MAX_STALL_MS);
  });

  it("/send with a subject of é the encoder folds into thousands of lines does not stall either", async () => {
    const before = sink().messages.length;
    const subject = "é".repeat(250_000);
    const { result, maxDelayMs, slowestHealthMs } = await whileServingHealth(() =>
      relay.send.post(
        "/send",
        { from: "a@shop.test", to: ["b@dest.test"], subject, text: "hi" },
        { authorization },
      ),
    );
    expect(result.statusCode, result.body).toBe(200);
    const [mail] = (await sink().waitForMessages(before + 1)).slice(-1);
    expect((await relay.send.verifyDkim(mail!.raw))[0]?.status.result).toBe("pass");
    expect(maxDelayMs).toBeLessThan(MAX_STALL_MS);
    expect(slowestHealthMs).toBeLessThan(MAX_STALL_MS);
  });

  const overLimit = [
    [
      "one long field",
      `From: a@shop.test\r\nX-Long: ${"x".repeat(MAX_HEADER_BLOCK_BYTES)}\r\n\r\nbody`,
    ],
    ["folded lines", folded(MAX_HEADER_BLOCK_BYTES / 4 + 1)],
    [
      "many fields",
      `From: a@shop.test\r\n${"X-Many: a\r\n".repeat(MAX_HEADER_BLOCK_BYTES / 11 + 1)}\r\nbody`,
    ],
  ] as const;

  it.each(overLimit)(
    "/send-raw: a header block over 1 MiB (%s) is 400 headers_too_large",
    async (_shape, raw) => {
      const response = await sendRaw(raw);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        error: "headers_too_large",
        message: expect.stringContaining(`at most ${MAX_HEADER_BLOCK_BYTES}`),
      });
    },
  );

  it.each(overLimit)("SMTP: a header block over 1 MiB (%s) is 552 5.3.4", async (_shape, raw) => {
    expect(await submitSmtp(raw)).toMatch(/^552 5\.3\.4 the header block is \d+ octets/);
    expect(relay.rejections().at(-1)).toMatchObject({
      reason: "headers_too_large",
      smtp_code: 552,
    });
  });

  it.each([
    ["a subject", { subject: "é".repeat(MAX_HEADER_BLOCK_BYTES) }],
    [
      "display names",
      { to: Array.from({ length: 600 }, (_, i) => `${"N".repeat(2000)} <r${i}@dest.test>`) },
    ],
  ])(
    "/send: headers that would encode over 1 MiB (%s) are 400 headers_too_large at once",
    async (_case, fields) => {
      const started = performance.now();
      const response = await relay.send.post(
        "/send",
        { from: "a@shop.test", to: ["b@dest.test"], subject: "s", ...fields },
        { authorization },
      );
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe("headers_too_large");
      expect(performance.now() - started).toBeLessThan(MAX_STALL_MS * 2);
    },
  );

  const allHeader = [
    ["without a final line break", "From: a@shop.test"],
    ["with a final CRLF", "From: a@shop.test\r\nTo: b@dest.test\r\nSubject: x\r\n"],
    ["with LF endings", "From: a@shop.test\nSubject: x\n"],
    ["with a folded last field", "From: a@shop.test\r\nSubject: x\r\n y"],
  ] as const;

  it.each(allHeader)(
    "/send-raw: a message that is all header (%s) is signed and delivered with an empty body",
    async (_case, raw) => {
      const before = sink().messages.length;
      const response = await sendRaw(raw);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().results[0]).toMatchObject({ ok: true });
      const [mail] = (await sink().waitForMessages(before + 1)).slice(-1);
      expect(mail!.raw.toString("latin1")).toMatch(/\r\n\r\n$/);
      expect((await relay.send.verifyDkim(mail!.raw))[0]?.status.result).toBe("pass");
    },
  );

  it.each(allHeader)(
    "SMTP: a message that is all header (%s) is accepted, signed and delivered",
    async (_case, raw) => {
      const before = sink().messages.length;
      expect(await submitSmtp(raw)).toMatch(/^250 /);
      const [mail] = (await sink().waitForMessages(before + 1)).slice(-1);
      expect((await relay.send.verifyDkim(mail!.raw))[0]?.status.result).toBe("pass");
    },
  );

  it.each([
    ["a long ASCII subject", { subject: "x".repeat(2000) }],
    ["a long ASCII sender name", { from: `${"A".repeat(2000)} <a@shop.test>` }],
    ["a long dotted recipient name", { to: [`${"b.".repeat(1000)} <b@dest.test>`] }],
  ])(
    "/send: %s reaches a strict server (no line over 998 octets), DKIM intact",
    async (_case, fields) => {
      const before = sink().messages.length;
      const response = await relay.send.post(
        "/send",
        { from: "a@shop.test", to: ["b@dest.test"], subject: "s", text: "hi", ...fields },
        { authorization },
      );
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().results[0]).toMatchObject({ ok: true });
      const [mail] = (await sink().waitForMessages(before + 1)).slice(-1);
      expect((await relay.send.verifyDkim(mail!.raw))[0]?.status.result).toBe("pass");
    },
  );
});
