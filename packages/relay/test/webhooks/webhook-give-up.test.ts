import { ManualClock } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "../fixtures/http-receiver.js";
import { within } from "../shared/shared-relays.js";
import { SendRelay } from "../submission/send-harness.js";

interface View {
  pending: number;
  recent_attempts: Array<{ attempt: number; status: number; outcome: string }>;
}

/** An endpoint that never accepts: retried on the relay's clock, given up 24 hours after the event. */
describe("a webhook event never accepted", () => {
  const clock = new ManualClock();
  let relay: SendRelay;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    relay = await SendRelay.start({ sinks: { "dest.test": { tls: "none" } }, clock });
    await relay.relay.relay.listen();
    await relay.addDomain("shop.test");
    receiver = await startHttpReceiver("fail");
  });
  afterAll(async () => {
    await relay?.close();
    await receiver?.close();
  });

  it("is retried when its backoff has passed, then given up after 24 hours and recorded so", async () => {
    const created = await relay.relay.admin("POST", "/webhooks", {
      url: receiver.url,
      events: ["delivered"],
    });
    const { id } = created.json() as { id: string };
    const view = async () => (await relay.relay.admin("GET", `/webhooks/${id}`)).json() as View;
    const { authorization } = await relay.addClient(["shop.test"]);
    const sent = await relay.post(
      "/send",
      { from: "a@shop.test", to: ["ana@dest.test"], subject: "hi", text: "hello" },
      { authorization },
    );
    expect(sent.statusCode).toBe(200);
    await within(3_000, async () => (await view()).recent_attempts.length === 1, "attempt 1");

    // Not due before its 5 s backoff on the relay's clock, however long the test waits.
    clock.advance(4_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.requests).toHaveLength(1);
    clock.advance(1_000);
    await within(3_000, async () => (await view()).recent_attempts.length === 2, "attempt 2");

    // Past the event's 24 hours: the next attempt is the last one.
    clock.advance(24 * 3600 * 1000);
    await within(3_000, async () => (await view()).pending === 0, "the event given up");
    const { recent_attempts } = await view();
    expect(recent_attempts).toEqual([
      expect.objectContaining({ attempt: 3, status: 500, outcome: "gave_up" }),
      expect.objectContaining({ attempt: 2, status: 500, outcome: "retrying" }),
      expect.objectContaining({ attempt: 1, status: 500, outcome: "retrying" }),
    ]);
    expect(receiver.requests).toHaveLength(3);
    const warning = relay.relay.logs
      .forTarget("relay::webhooks")
      .find((line) => line.level === "WARN");
    expect(warning?.fields).toMatchObject({ endpoint: id, attempts: 3, error: "HTTP 500" });
  });
});
