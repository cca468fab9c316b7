import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "../fixtures/http-receiver.js";
import { within } from "../shared/shared-relays.js";
import { SendRelay } from "../submission/send-harness.js";

/** The asynchronous queue's temporary failure reaches an endpoint as a `deferred` event. */
describe("deferred webhook events", () => {
  let relay: SendRelay;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    relay = await SendRelay.start({
      sinks: {
        "busy.test": { tls: "none", reject: { stage: "rcpt", code: 451, message: "4.3.2 busy" } },
      },
      env: { RELAY_REDIS: "" },
    });
    await relay.relay.relay.listen();
    await relay.addDomain("shop.test");
    receiver = await startHttpReceiver("ok");
  });
  afterAll(async () => {
    await relay?.close();
    await receiver?.close();
  });

  it("POSTs a deferred event with the remote answer and the next wait", async () => {
    const created = await relay.relay.admin("POST", "/webhooks", {
      url: receiver.url,
      events: ["deferred"],
    });
    expect(created.statusCode).toBe(201);
    const { authorization, clientId } = await relay.addClient(["shop.test"]);
    const accepted = await relay.post(
      "/send",
      {
        from: "a@shop.test",
        to: ["eve@busy.test"],
        subject: "hi",
        text: "hello",
        metadata: { order: "7" },
      },
      { authorization },
    );
    expect(accepted.statusCode).toBe(202);
    await within(5_000, async () => receiver.requests.length >= 1, "the deferred event");
    expect(JSON.parse(receiver.requests[0]?.body ?? "{}")).toMatchObject({
      type: "deferred",
      message_id: accepted.json().message_id,
      rcpt: "eve@busy.test",
      client_id: clientId,
      tags: [],
      metadata: { order: "7" },
      error: expect.stringContaining("451"),
      next_wait_s: expect.any(Number),
    });
  });
});
