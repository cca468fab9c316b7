import { type Clock, systemClock } from "@rd/common";
import { ManualClock } from "@rd/common/test-kit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import { createDeliveryAttempt, type RecipientJob } from "../../src/outbound/delivery-attempt.js";
import type { DeliveryEvent } from "../../src/outbound/delivery-events.js";
import { createMxResolver, type MxOverrides } from "../../src/outbound/mx-resolver.js";
import { createSendGate } from "../../src/outbound/send-gate.js";
import { createSmtpTransport } from "../../src/outbound/smtp-transport.js";
import { createSyncDelivery } from "../../src/outbound/sync-delivery.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type SmtpSink, type SmtpSinkOptions, startSmtpSink } from "../fixtures/smtp-sink.js";

const MESSAGE_ID = "<sync-1@sender.test>";
let dnsServer: DnsServer;
beforeAll(async () => {
  dnsServer = await startDnsServer({ "nullmx.test": { MX: [{ exchange: ".", priority: 0 }] } });
});
afterAll(() => dnsServer.close());

const sinks: SmtpSink[] = [];
async function sink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const started = await startSmtpSink(options);
  sinks.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
});

/** The delivery pipeline as the relay builds it, pointed at local servers. */
function pipeline(options: {
  overrides?: MxOverrides;
  delays?: number[];
  timeoutSecs?: number;
  dns?: string;
  closing?: AbortSignal;
  clock?: Clock;
}) {
  const events: DeliveryEvent[] = [];
  const emit = (event: DeliveryEvent) => events.push(event);
  const attempt = createDeliveryAttempt({
    resolveMx: createMxResolver({
      // The relay's own DNS timeout: a busy machine must not turn an answer into a timeout.
      // The DNS failure below is a refused port, which fails at once.
      dns: createDnsResolver(options.dns ?? dnsServer.address),
      overrides: options.overrides ?? {},
    }),
    transport: createSmtpTransport({
      heloHostname: "relay.sender.test",
      timeoutMs: (options.timeoutSecs ?? 5) * 1000,
    }),
    gate: createSendGate(() => 0),
    emit,
  });
  const retries: number[] = [];
  const sync = createSyncDelivery({
    attempt,
    emit,
    retryDelaysSecs: () => options.delays ?? [0, 0.1, 0.2],
    clock: options.clock ?? systemClock,
    closing: options.closing,
  });
  const deliver = (recipient: RecipientJob) =>
    sync(recipient, (attempts) => retries.push(attempts));
  return { deliver, events, retries };
}

function job(rcpt: string): RecipientJob {
  return {
    messageId: MESSAGE_ID,
    envelopeFrom: "a@sender.test",
    rcpt,
    raw: Buffer.from(`Message-ID: ${MESSAGE_ID}\r\nSubject: hi\r\n\r\nhello\r\n`),
    requireTls: false,
  };
}

describe("synchronous delivery", () => {
  it("delivers and reports `entregue via <host>: <reply>` with the ledger trail", async () => {
    const mx = await sink();
    const { deliver, events } = pipeline({ overrides: { "rcpt.test": [mx.address] } });
    const outcome = await deliver(job("b@rcpt.test"));
    expect(outcome.ok).toBe(true);
    expect(outcome.attempts).toBe(1);
    expect(outcome.detail).toMatch(
      new RegExp(`^entregue via ${mx.address}: 250 .*queued as sink-1`),
    );
    expect(events.map((e) => e.event)).toEqual(["mx_resolved", "attempt", "delivered"]);
    expect(events.every((e) => e.message_id === MESSAGE_ID && e.rcpt === "b@rcpt.test")).toBe(true);
    expect(events[0]).toMatchObject({ mx_hosts: [mx.address] });
    expect(events[1]).toMatchObject({ host: mx.address, attempt: 1 });
    expect(events[2]).toMatchObject({ host: mx.address, attempt: 1, tls: true });
    expect((events[2] as { smtp_response: string }).smtp_response).toMatch(/^250 /);
  });

  it("retries a 4xx on the schedule, then fails with the last error", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 451, message: "4.7.1 greylisted" } });
    const { deliver, events, retries } = pipeline({ overrides: { "rcpt.test": [mx.address] } });
    const started = Date.now();
    const outcome = await deliver(job("b@rcpt.test"));
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(outcome).toMatchObject({ ok: false, attempts: 3 });
    expect(outcome.detail).toMatch(/^451 4\.7\.1 greylisted/);
    expect(retries).toEqual([1, 2]);
    const deferred = events.filter((e) => e.event === "deferred");
    expect(deferred).toEqual([
      expect.objectContaining({ host: mx.address, tls: true, next_wait_s: 0.1 }),
      expect.objectContaining({ host: mx.address, tls: true, next_wait_s: 0.2 }),
    ]);
    expect(events.filter((e) => e.event === "attempt").map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(events.at(-1)).toMatchObject({ event: "failed", permanent: false });
    expect((events.at(-1) as { error: string }).error).toMatch(/^451 /);
  });

  it("at shutdown, ends its wait for the next attempt and never settles: no attempt, no outcome", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 451, message: "4.7.1 greylisted" } });
    const closing = new AbortController();
    const clock = new ManualClock();
    const { deliver, events, retries } = pipeline({
      overrides: { "rcpt.test": [mx.address] },
      delays: [0, 600],
      closing: closing.signal,
      clock,
    });
    const delivery = deliver(job("b@rcpt.test"));
    // The first attempt is refused; the next would be ten minutes later.
    await expect.poll(() => retries).toEqual([1]);
    await expect.poll(() => clock.pendingSleeps).toBe(1);

    closing.abort();
    // The ten minutes' wait is over: on the system clock its timer would keep the process alive.
    expect(clock.pendingSleeps).toBe(0);
    const settled = await Promise.race([
      delivery.then(() => "settled"),
      new Promise((resolve) => setTimeout(() => resolve("pending"), 100)),
    ]);
    expect(settled).toBe("pending");
    expect(events.filter((e) => e.event === "attempt")).toHaveLength(1);
    expect(events.map((e) => e.event)).not.toContain("failed");
  });

  it("delivers on a later attempt after a temporary refusal", async () => {
    const mx = await sink({ reject: { stage: "data", code: 421, times: 1 } });
    const { deliver, events } = pipeline({ overrides: { "rcpt.test": [mx.address] } });
    const outcome = await deliver(job("b@rcpt.test"));
    expect(outcome).toMatchObject({ ok: true, attempts: 2 });
    expect(events.at(-1)).toMatchObject({ event: "delivered", attempt: 2 });
    expect(mx.messages).toHaveLength(1);
  });

  it("stops at once on a 5xx", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 550, message: "5.1.1 unknown user" } });
    const { deliver, events } = pipeline({ overrides: { "rcpt.test": [mx.address] } });
    const outcome = await deliver(job("b@rcpt.test"));
    expect(outcome).toMatchObject({ ok: false, attempts: 1 });
    expect(outcome.detail).toMatch(/^550 5\.1\.1 unknown user/);
    expect(events.map((e) => e.event)).toEqual(["mx_resolved", "attempt", "failed"]);
    expect(events.at(-1)).toMatchObject({ permanent: true });
  });

  it("gives up on a stalled server after smtp_timeout_secs per attempt", async () => {
    const mx = await sink({ stall: "data" });
    const { deliver } = pipeline({
      overrides: { "rcpt.test": [mx.address] },
      delays: [0],
      timeoutSecs: 1,
    });
    const started = Date.now();
    const outcome = await deliver(job("b@rcpt.test"));
    const elapsed = Date.now() - started;
    expect(outcome.ok).toBe(false);
    expect(outcome.detail).toMatch(/^timeout with /);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(5000);
  });

  it("fails permanently, without any SMTP attempt, for a null MX and for NXDOMAIN", async () => {
    const { deliver, events } = pipeline({});
    const nullMx = await deliver(job("b@nullmx.test"));
    const missing = await deliver(job("b@missing.test"));
    expect(nullMx).toMatchObject({ ok: false, attempts: 1 });
    expect(nullMx.detail).toContain("null MX");
    expect(missing.detail).toContain("NXDOMAIN");
    expect(events.map((e) => e.event)).toEqual(["failed", "failed"]);
  });

  it("defers a DNS failure with host `-` and retries it", async () => {
    const { deliver, events } = pipeline({ dns: "127.0.0.1:9", delays: [0, 0.05] });
    const outcome = await deliver(job("b@rcpt.test"));
    expect(outcome).toMatchObject({ ok: false, attempts: 2 });
    expect(events[0]).toMatchObject({ event: "deferred", host: "-", tls: false });
    expect(events[1]).toMatchObject({ event: "failed", permanent: false });
  });
});
