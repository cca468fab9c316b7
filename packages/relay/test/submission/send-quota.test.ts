import { ManualClock } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendRelay } from "./send-harness.js";

describe("per-domain quotas on recipients accepted", () => {
  // 12:40:00 UTC: the hour window ends at 13:00, the day at midnight.
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 40, 0));
  let relay: SendRelay;
  let authorization: string;

  beforeAll(async () => {
    relay = await SendRelay.start({ clock, sinks: { "dest.test": {} } });
    await relay.addDomain("small.test", { limits: { per_hour: 3, per_day: 5 } });
    await relay.addDomain("default.test");
    ({ authorization } = await relay.addClient(["small.test", "default.test"]));
  });
  afterAll(() => relay.close());

  const send = (from: string, count: number) =>
    relay.post(
      "/send",
      {
        from,
        to: Array.from({ length: count }, (_, i) => `r${i}@dest.test`),
        subject: "quota",
        text: "x",
      },
      { authorization },
    );

  it("counts each recipient and refuses a request that would overflow the hour, whole", async () => {
    expect((await send("a@small.test", 2)).statusCode).toBe(200);
    const delivered = relay.sinks["dest.test"]?.messages.length;

    const refused = await send("a@small.test", 2);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      error: "quota_exceeded",
      message: expect.any(String),
      limit: "per_hour",
      resets_at: "2026-01-01T13:00:00.000Z",
    });
    // Nothing of the refused request left, and nothing of it was counted.
    expect(relay.sinks["dest.test"]?.messages.length).toBe(delivered);
    expect((await send("a@small.test", 1)).statusCode).toBe(200);
    expect((await send("a@small.test", 1)).statusCode).toBe(429);
  });

  it("records the refusal with the message_id it had reached", async () => {
    const refusal = relay
      .ledger()
      .filter((event) => event.event === "rejected" && event.reason === "quota_exceeded")
      .at(-1);
    expect(refusal).toEqual({
      event: "rejected",
      message_id: expect.stringMatching(/^<[0-9a-f]+@small\.test>$/),
      reason: "quota_exceeded",
      http_status: 429,
    });
    const received = relay
      .ledger()
      .filter((e) => e.event === "received" && e.message_id === refusal?.message_id);
    expect(received).toHaveLength(1);
    expect(
      relay.ledger().filter((e) => e.event === "signed" && e.message_id === refusal?.message_id),
    ).toEqual([]);
  });

  it("opens the next hour on the clock, and then names the day when it is full", async () => {
    clock.advance(20 * 60 * 1000);
    expect((await send("a@small.test", 2)).statusCode).toBe(200);
    const refused = await send("a@small.test", 1);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({
      limit: "per_day",
      resets_at: "2026-01-02T00:00:00.000Z",
    });
  });

  it("applies default_domain_limits (20 per hour) to a domain without its own limits", async () => {
    expect((await send("a@default.test", 20)).statusCode).toBe(200);
    const refused = await send("a@default.test", 1);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ limit: "per_hour" });
  });

  it("keeps counting across a restart", async () => {
    await relay.relay.restart();
    expect((await send("a@small.test", 1)).statusCode).toBe(429);
  });
});
