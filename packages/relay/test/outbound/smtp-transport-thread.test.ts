import { createServer, type Server } from "node:net";
import { threadId } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { parseOverrideEntry } from "../../src/outbound/mx-resolver.js";
import { createSmtpTransportThread } from "../../src/outbound/smtp-transport-thread.js";
import { type SmtpSink, type SmtpSinkOptions, startSmtpSink } from "../fixtures/smtp-sink.js";
import { failure } from "./delivery-failure.js";

const MESSAGE = Buffer.from(
  "From: a@sender.test\r\nTo: b@rcpt.test\r\nSubject: hello\r\n\r\nbody line\r\n.leading dot\r\n",
);

const sinks: SmtpSink[] = [];
async function sink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const started = await startSmtpSink(options);
  sinks.push(started);
  return started;
}
const thread = createSmtpTransportThread();
afterEach(async () => {
  await thread.close();
  await Promise.all(sinks.splice(0).map((s) => s.close()));
});

const transport = () => thread.transport({ heloHostname: "relay.sender.test", timeoutMs: 2000 });

function request(hosts: string[], onHost?: (host: string) => void) {
  return {
    envelopeFrom: "a@sender.test",
    rcpt: "b@rcpt.test",
    raw: MESSAGE,
    hosts: hosts.map(parseOverrideEntry),
    requireTls: false,
    onHost,
  };
}

/** A port on loopback where nothing listens (connection refused). */
async function closedPort(): Promise<string> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
}

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
    const delivering = transport()(request([down, mx.address], (host) => told.push(host)));
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
