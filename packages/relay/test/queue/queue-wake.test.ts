import { setTimeout as sleep } from "node:timers/promises";
import { systemClock } from "@rd/common";
import { afterEach, describe, expect, it } from "vitest";
import { ADMIN_TOKEN } from "../helpers/relay-harness.js";
import { SendRelay } from "../submission/send-harness.js";
import { queueOf, UNLIMITED } from "./async-relay.js";

// Asynchronous mode with the internal ticker running (the server listens): an accepted message
// is attempted at once, not at the next tick, still through the send gate.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listeningRelay(config: Record<string, unknown>) {
  // The system clock: the send gate really waits.
  const relay = await SendRelay.start({
    sinks: { "dest.test": { tls: "none" } },
    env: { RELAY_REDIS: "" },
    config,
    clock: systemClock,
  });
  cleanups.push(() => relay.close());
  await relay.addDomain("shop.test", { limits: UNLIMITED });
  const client = await relay.addClient(["shop.test"]);
  await relay.relay.relay.listen();
  const send = async (to: string, requestId?: string) => {
    const response = await relay.post(
      "/send-raw",
      { from: "a@shop.test", to: [to], raw: `From: a@shop.test\r\nTo: ${to}\r\n\r\nhello\r\n` },
      { authorization: client.authorization, ...(requestId && { "x-request-id": requestId }) },
    );
    expect(response.statusCode, response.body).toBe(202);
    return (response.json() as { message_id: string }).message_id;
  };
  return { relay, send, sink: relay.sinks["dest.test"]! };
}

describe("queue wake-up on acceptance", () => {
  it("delivers an accepted message at once, long before the next tick", async () => {
    const { relay, send, sink } = await listeningRelay({ tick_interval_secs: 3600 });
    const messageId = await send("now@dest.test");
    const [mail] = await sink.waitForMessages(1, 5000);
    expect(mail?.envelope.to).toEqual(["now@dest.test"]);
    await expect
      .poll(async () => (await queueOf(relay, `?message_id=${encodeURIComponent(messageId)}`))[0])
      .toMatchObject({ estado: "sent", attempts: 1 });
  });

  it("keeps taking messages accepted while it delivers, each exactly once", async () => {
    const { send, sink } = await listeningRelay({ tick_interval_secs: 3600 });
    const recipients = Array.from({ length: 40 }, (_, index) => `r${index}@dest.test`);
    await Promise.all(recipients.map((to) => send(to)));
    await sink.waitForMessages(40, 10_000);
    await sleep(200);
    expect(sink.messages.map((mail) => mail.envelope.to[0]).sort()).toEqual(recipients.sort());
  });

  it("still passes the send gate: attempts start send_delay_secs apart", async () => {
    const { send, sink } = await listeningRelay({ tick_interval_secs: 3600, send_delay_secs: 0.3 });
    const started = Date.now();
    await Promise.all(["g1@dest.test", "g2@dest.test", "g3@dest.test"].map((to) => send(to)));
    await sink.waitForMessages(3, 5000);
    // Three attempts: the second and third each wait 0.3 s after the start of the one before.
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
  });

  it("with the internal ticker off (tick_interval_secs 0), waits for an explicit tick", async () => {
    const { relay, send, sink } = await listeningRelay({ tick_interval_secs: 0 });
    await send("later@dest.test");
    await sleep(300);
    expect(sink.messages).toHaveLength(0);
    const response = await relay.relay.admin("POST", "/queue/tick");
    expect(response.json()).toMatchObject({ entregues: 1 });
    expect(sink.messages).toHaveLength(1);
  });

  // Background work a request only woke is part of no request: before, the deliveries of a
  // group commit carried the id of the request that had opened the group, another message's.
  it.each([
    ["handed over at acceptance", 0],
    ["taken by the drain the acceptance woke", 0.05],
  ])("writes the lines of deliveries %s with no request id", async (_, delay) => {
    const { relay, send, sink } = await listeningRelay({
      tick_interval_secs: 3600,
      send_delay_secs: delay,
    });
    const recipients = Array.from({ length: 8 }, (_, index) => `id${index}@dest.test`);
    const sent = await Promise.all(recipients.map((to, index) => send(to, `req-${index}`)));
    await sink.waitForMessages(recipients.length, 10_000);
    await expect
      .poll(() => relay.ledger().filter((event) => event.event === "delivered").length)
      .toBe(recipients.length);
    for (const [index, messageId] of sent.entries()) {
      expect(relay.requestIdsOf(messageId)).toEqual([
        ["received", `req-${index}`],
        ["signed", `req-${index}`],
        ["mx_resolved", undefined],
        ["attempt", undefined],
        ["delivered", undefined],
      ]);
    }
  });

  it("writes the lines of the deliveries an explicit tick runs with the tick's request id", async () => {
    const { relay, send, sink } = await listeningRelay({ tick_interval_secs: 0 });
    const messageId = await send("ticked@dest.test", "req-send");
    const response = await relay.relay.app.inject({
      method: "POST",
      url: "/queue/tick",
      headers: { "x-auth-token": ADMIN_TOKEN, "x-request-id": "req-tick" },
    });
    expect(response.json()).toMatchObject({ entregues: 1 });
    expect(sink.messages).toHaveLength(1);
    expect(relay.requestIdsOf(messageId)).toEqual([
      ["received", "req-send"],
      ["signed", "req-send"],
      ["mx_resolved", "req-tick"],
      ["attempt", "req-tick"],
      ["delivered", "req-tick"],
    ]);
  });
});
