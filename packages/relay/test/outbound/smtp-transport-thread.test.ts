import { threadId } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { createSmtpTransportThread } from "../../src/outbound/smtp-transport-thread.js";
import { failure } from "./delivery-failure.js";
import { closedPort, MESSAGE, request, sinkRegistry } from "./transport-fixtures.js";

const { sink, closeAll } = sinkRegistry();
const thread = createSmtpTransportThread();
afterEach(async () => {
  await thread.close();
  await closeAll();
});

const transport = () => thread.transport({ heloHostname: "relay.sender.test", timeoutMs: 2000 });

describe("SMTP transport in a worker thread", () => {
  it("delivers the exact bytes from another thread than the caller's", async () => {
    const mx = await sink();
    const receipt = await transport()(request([mx.address]));
    expect(receipt).toMatchObject({ host: mx.address, tls: true });
    expect(receipt.response).toMatch(/^250 .*queued as sink-1/);
    expect(mx.messages[0]?.raw.equals(MESSAGE)).toBe(true);
    expect(mx.messages[0]?.clientHostname).toBe("relay.sender.test");
    // The session stays open for the next message: this thread holds only the sink's end of
    // it (the transport's own end would be a second socket here).
    expect(threadId).toBe(0);
    const sockets = process.getActiveResourcesInfo().filter((kind) => kind === "TCPSocketWrap");
    expect(sockets).toHaveLength(1);
  });

  it("tells every host tried, in order, once each, the first one at once", async () => {
    const down = await closedPort();
    const mx = await sink({ tls: "none" });
    const told: string[] = [];
    const delivering = transport()(
      request([down, mx.address], { onHost: (host) => told.push(host) }),
    );
    expect(told).toEqual([down]);
    await delivering;
    expect(told).toEqual([down, mx.address]);
  });

  it("answers a refusal as the DeliveryError the transport gave, with its details", async () => {
    const mx = await sink({
      tls: "none",
      reject: { stage: "rcpt", code: 550, message: "no such user" },
    });
    const error = await failure(transport()(request([mx.address])));
    expect(error).toMatchObject({ permanent: true, smtpCode: 550, host: mx.address, tls: false });
    expect(error.message).toMatch(/^550\b.*no such user/);
  });

  it("fails what is in flight when it is closed, and starts again for the next delivery", async () => {
    const stalled = await sink({ tls: "none", stall: "greeting" });
    const pending = transport()(request([stalled.address]));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await thread.close();
    await expect(pending).rejects.toThrow(/SMTP worker thread exited/);
    const mx = await sink({ tls: "none" });
    await expect(transport()(request([mx.address]))).resolves.toMatchObject({ host: mx.address });
  });
});
