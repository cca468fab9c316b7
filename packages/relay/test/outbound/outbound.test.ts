import { systemClock } from "@rd/common";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import type { DeliveryEvent } from "../../src/outbound/delivery-events.js";
import {
  createOutbound,
  type OutboundSettings,
  RECIPIENTS_IN_FLIGHT,
} from "../../src/outbound/outbound.js";
import { createQueueRepository, type QueueRepository } from "../../src/state/queue-repository.js";
import { type SmtpSink, type SmtpSinkOptions, startSmtpSink } from "../fixtures/smtp-sink.js";
import { useScratchState } from "../helpers/scratch-state.js";

const MESSAGE_ID = "<outbound-1@sender.test>";
const RAW = Buffer.from(
  `Message-ID: ${MESSAGE_ID}\r\nFrom: a@sender.test\r\nSubject: hi\r\n\r\nhello\r\n`,
);

/** The relay's clock, which stamps the queue rows. */
const CLOCK_MS = Date.UTC(2026, 0, 2, 3, 4, 5);

const state = useScratchState("relay-outbound-");
let queue: QueueRepository;
const sinks: SmtpSink[] = [];

beforeEach(() => {
  queue = createQueueRepository(state.db);
});
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
});

async function sink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const started = await startSmtpSink(options);
  sinks.push(started);
  return started;
}

function settings(overrides: Partial<OutboundSettings>): OutboundSettings {
  return {
    helo_hostname: "relay.sender.test",
    smtp_timeout_secs: 5,
    require_tls: false,
    domains: {},
    mx_override: {},
    sync_retry_delays_secs: [0],
    send_delay_secs: 0,
    ...overrides,
  };
}

/** Outbound wired as main.ts does, with the ledger events recorded (and their time). */
function outbound(current: () => OutboundSettings) {
  const events: Array<DeliveryEvent & { at: number }> = [];
  const instance = createOutbound({
    settings: current,
    // DNS is never asked: every test domain is in mx_override.
    dns: createDnsResolver("127.0.0.1:9", 200),
    queue,
    emit: (event) => events.push({ ...event, at: Date.now() }),
    // Rows stamped at a fixed time; the gate and the retries wait in real time.
    clock: { now: () => new Date(CLOCK_MS), sleep: systemClock.sleep },
  });
  return { instance, events };
}

function message(recipients: string[], domain = "sender.test") {
  return {
    messageId: MESSAGE_ID,
    clientId: "cli_0123456789abcdef",
    envelopeFrom: `a@${domain}`,
    domain,
    recipients,
    message: RAW,
  };
}

function rows() {
  return state.db.prepare("SELECT * FROM queue ORDER BY pk").all() as Array<
    Record<string, unknown>
  >;
}

describe("outbound delivery", () => {
  it("delivers every recipient, answers in order, and records each as a queue row", async () => {
    const good = await sink();
    const bad = await sink({ reject: { stage: "rcpt", code: 550, message: "5.1.1 no user" } });
    const { instance, events } = outbound(() =>
      settings({ mx_override: { "good.test": [good.address], "bad.test": [bad.address] } }),
    );
    const results = await instance.deliver(message(["x@good.test", "y@bad.test"]));
    expect(results).toEqual([
      { to: "x@good.test", ok: true, detail: expect.stringMatching(/^entregue via .*: 250 /) },
      { to: "y@bad.test", ok: false, detail: expect.stringMatching(/^550 5\.1\.1 no user/) },
    ]);
    expect(good.messages[0]?.raw.equals(RAW)).toBe(true);
    expect(rows()).toEqual([
      expect.objectContaining({
        message_id: MESSAGE_ID,
        client_id: "cli_0123456789abcdef",
        envelope_from: "a@sender.test",
        rcpt: "x@good.test",
        estado: "sent",
        attempts: 1,
        spool_file: null,
        created_at: CLOCK_MS / 1000,
        finished_at: CLOCK_MS / 1000,
      }),
      expect.objectContaining({
        rcpt: "y@bad.test",
        estado: "failed",
        attempts: 1,
        last_error: expect.stringMatching(/^550 /),
      }),
    ]);
    // Each recipient's ledger trail, correlated by the message's id (the two run in parallel).
    const trail = (rcpt: string) =>
      events.filter((e) => e.rcpt === rcpt).map((e) => [e.event, e.message_id]);
    expect(trail("x@good.test")).toEqual([
      ["mx_resolved", MESSAGE_ID],
      ["attempt", MESSAGE_ID],
      ["delivered", MESSAGE_ID],
    ]);
    expect(trail("y@bad.test")).toEqual([
      ["mx_resolved", MESSAGE_ID],
      ["attempt", MESSAGE_ID],
      ["failed", MESSAGE_ID],
    ]);
    expect(events).toHaveLength(6);
  });

  it("records the attempts of a retried delivery on its row", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 451, message: "4.7.1 later" } });
    const { instance } = outbound(() =>
      settings({ mx_override: { "r.test": [mx.address] }, sync_retry_delays_secs: [0, 0.1, 0.2] }),
    );
    const [result] = await instance.deliver(message(["x@r.test"]));
    expect(result?.ok).toBe(false);
    expect(rows()[0]).toMatchObject({
      estado: "failed",
      attempts: 3,
      last_error: expect.stringMatching(/^451 4\.7\.1 later/),
    });
  });

  it("applies require_tls of the sender domain over the global value", async () => {
    const plain = await sink({ tls: "none" });
    const current = settings({
      mx_override: { "r.test": [plain.address] },
      require_tls: false,
      domains: { "strict.test": { require_tls: true }, "lax.test": { require_tls: false } },
    });
    const { instance } = outbound(() => current);
    const [strict] = await instance.deliver(message(["x@r.test"], "strict.test"));
    expect(strict?.ok).toBe(false);
    expect(strict?.detail).toContain("does not offer STARTTLS");
    const [open] = await instance.deliver(message(["x@r.test"], "sender.test"));
    expect(open?.ok).toBe(true);
    expect(plain.messages).toHaveLength(1);

    const strictGlobal = outbound(() => ({ ...current, require_tls: true })).instance;
    expect((await strictGlobal.deliver(message(["x@r.test"], "sender.test")))[0]?.ok).toBe(false);
    expect((await strictGlobal.deliver(message(["x@r.test"], "lax.test")))[0]?.ok).toBe(true);
  });

  it("spaces attempts by send_delay_secs, read live, and runs them together at 0", async () => {
    const mx = await sink({ tls: "none" });
    let current = settings({ mx_override: { "r.test": [mx.address] }, send_delay_secs: 0.3 });
    const { instance, events } = outbound(() => current);
    const attemptTimes = () => events.filter((e) => e.event === "attempt").map((e) => e.at);

    const sentAt = Date.now();
    await instance.deliver(message(["a@r.test", "b@r.test", "c@r.test"]));
    const gated = attemptTimes();
    expect(gated).toHaveLength(3);
    // The gate spaces the attempts' starts 300 ms apart; an `attempt` event comes once the
    // transport's thread tries the host, a varying time later, so each is bounded from the call.
    expect(gated[1]! - sentAt).toBeGreaterThanOrEqual(300);
    expect(gated[2]! - sentAt).toBeGreaterThanOrEqual(600);

    events.length = 0;
    current = { ...current, send_delay_secs: 0 };
    // The last gated attempt started just now; without the gate nothing waits for it.
    await instance.deliver(message(["a@r.test", "b@r.test", "c@r.test"]));
    // In parallel: every attempt starts before the first delivery ends (order, not timing).
    const trail = events.map((event) => event.event);
    expect(trail.lastIndexOf("attempt")).toBeLessThan(trail.indexOf("delivered"));
    expect(mx.messages).toHaveLength(6);
  });

  it("delivers a long recipient list a few at a time, answering in order", async () => {
    const mx = await sink({ tls: "none" });
    const { instance, events } = outbound(() =>
      settings({ mx_override: { "r.test": [mx.address] } }),
    );
    const recipients = Array.from({ length: 30 }, (_, i) => `r${i}@r.test`);
    let inFlight = 0;
    let peak = 0;
    const results = await instance.deliver(message(recipients));
    for (const event of events) {
      if (event.event === "attempt") peak = Math.max(peak, ++inFlight);
      if (event.event === "delivered") inFlight -= 1;
    }
    expect(results.map((r) => r.to)).toEqual(recipients);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(RECIPIENTS_IN_FLIGHT);
  });
});
