import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendRelay } from "../submission/send-harness.js";

describe("DKIM keys across domain changes", () => {
  let relay: SendRelay;

  beforeAll(async () => {
    relay = await SendRelay.start({
      env: { RELAY_AUTH_TOKEN: undefined },
      sinks: { "dest.test": {} },
    });
    await relay.addDomain("shop.test");
  });
  afterAll(() => relay.close());

  async function sendAndVerify() {
    const sink = relay.sinks["dest.test"];
    const before = sink?.messages.length ?? 0;
    const response = await relay.post("/send", {
      from: "a@shop.test",
      to: ["r@dest.test"],
      subject: "key",
      text: "x",
    });
    expect(response.statusCode).toBe(200);
    const mail = (await sink?.waitForMessages(before + 1))?.at(-1);
    return (await relay.verifyDkim(mail?.raw ?? Buffer.alloc(0)))[0]?.status.result;
  }

  it("signs with the new key once a domain is removed and registered again", async () => {
    expect(await sendAndVerify()).toBe("pass");
    expect((await relay.relay.admin("DELETE", "/domains/shop.test")).statusCode).toBe(200);
    // The harness publishes the new kit's DKIM record in place of the old one.
    await relay.addDomain("shop.test");
    expect(await sendAndVerify()).toBe("pass");
  });
});
