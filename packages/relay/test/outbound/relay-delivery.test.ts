import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendRelay } from "../submission/send-harness.js";

/** Outbound delivery seen through the running relay: HTTP in, SMTP sinks out, ledger, queue rows. */
describe("outbound delivery in the relay", () => {
  let relay: SendRelay;
  let authorization: string;
  let clientId: string;
  beforeAll(async () => {
    relay = await SendRelay.start({
      sinks: {
        "dest.test": { tls: "none" },
        "busy.test": { reject: { stage: "rcpt", code: 451, message: "4.3.2 busy" } },
      },
      config: { sync_retry_delays_secs: [0, 0.1] },
    });
    await relay.addDomain("shop.test");
    ({ authorization, clientId } = await relay.addClient(["shop.test"]));
  });
  afterAll(() => relay.close());

  const send = (to: string[]) =>
    relay.post(
      "/send",
      { from: "a@shop.test", to, subject: "hi", text: "hello" },
      {
        authorization,
      },
    );

  /** The ledger events of one message, in order, with their times (ms). */
  function trailOf(messageId: string): Array<{ event: string; at: number }> {
    return relay.relay.logs
      .forTarget("relay::ledger")
      .map((line) => ({
        ...(JSON.parse((line.fields as { ledger: string }).ledger) as {
          event: string;
          message_id: string;
        }),
        at: Date.parse(String(line.timestamp)),
      }))
      .filter((event) => event.message_id === messageId);
  }

  /** Start times (ms) of the `attempt` ledger events of one message. */
  const attemptTimes = (messageId: string) =>
    trailOf(messageId)
      .filter((event) => event.event === "attempt")
      .map((event) => event.at);

  function queueRows(messageId: string) {
    return relay.relay.relay.db
      .prepare("SELECT * FROM queue WHERE message_id = ? ORDER BY pk")
      .all(messageId) as Array<Record<string, unknown>>;
  }

  it("follows PUT /ratelimit send_delay_secs at once: spaced attempts, then parallel at 0", async () => {
    const put = (send_delay_secs: number) =>
      relay.relay.admin("PUT", "/ratelimit", { send_delay_secs });
    expect((await put(0.3)).statusCode).toBe(200);
    const sentAt = Date.now();
    const gated = await send(["a@dest.test", "b@dest.test", "c@dest.test"]);
    expect(gated.statusCode).toBe(200);
    const gatedTimes = attemptTimes(gated.json().message_id);
    expect(gatedTimes).toHaveLength(3);
    // The gate spaces the attempts' starts, each with its MX lookup, 300 ms apart; an `attempt`
    // event comes after that lookup, whose time varies, so each is bounded from the request.
    expect(gatedTimes[1]! - sentAt).toBeGreaterThanOrEqual(300);
    expect(gatedTimes[2]! - sentAt).toBeGreaterThanOrEqual(600);

    expect((await put(0)).statusCode).toBe(200);
    const parallel = await send(["a@dest.test", "b@dest.test", "c@dest.test"]);
    // In parallel: every attempt starts before the first delivery ends (order, not timing).
    const trail = trailOf(parallel.json().message_id).map((event) => event.event);
    expect(trail.filter((event) => event === "delivered")).toHaveLength(3);
    expect(trail.lastIndexOf("attempt")).toBeLessThan(trail.indexOf("delivered"));
  });

  it("records every synchronous delivery as a queue row of the sending client", async () => {
    const response = await send(["x@dest.test", "y@busy.test"]);
    const { message_id, results } = response.json();
    expect(results).toEqual([
      {
        to: "x@dest.test",
        ok: true,
        detail: expect.stringMatching(/^entregue via 127\.0\.0\.1:\d+: 250 /),
      },
      { to: "y@busy.test", ok: false, detail: expect.stringMatching(/^451 4\.3\.2 busy/) },
    ]);
    expect(queueRows(message_id)).toEqual([
      expect.objectContaining({
        client_id: clientId,
        envelope_from: "a@shop.test",
        rcpt: "x@dest.test",
        estado: "sent",
        attempts: 1,
      }),
      expect.objectContaining({
        rcpt: "y@busy.test",
        estado: "failed",
        attempts: 2,
        last_error: expect.stringMatching(/^451 /),
      }),
    ]);
  });

  it("writes the delivery trail to the ledger under the message's id", async () => {
    const response = await send(["z@busy.test"]);
    const { message_id } = response.json();
    const trail = relay
      .ledger()
      .filter((event) => event.message_id === message_id && event.rcpt === "z@busy.test")
      .map((event) => event.event);
    expect(trail).toEqual([
      "mx_resolved",
      "attempt",
      "deferred",
      "mx_resolved",
      "attempt",
      "failed",
    ]);
  });
});
