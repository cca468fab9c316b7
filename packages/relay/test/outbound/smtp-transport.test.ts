import { afterEach, describe, expect, it } from "vitest";
import { createSmtpTransport } from "../../src/outbound/smtp-transport.js";
import { failure } from "./delivery-failure.js";
import { closedPort, MESSAGE, request, sinkRegistry } from "./transport-fixtures.js";

const { sink, closeAll } = sinkRegistry();
afterEach(closeAll);

const transport = createSmtpTransport({ heloHostname: "relay.sender.test", timeoutMs: 2000 });

describe("SMTP transport", () => {
  it("upgrades with STARTTLS when offered and delivers the exact bytes with EHLO helo_hostname", async () => {
    const mx = await sink();
    const receipt = await transport(request([mx.address]));
    expect(receipt).toMatchObject({ host: mx.address, tls: true });
    expect(receipt.response).toMatch(/^250 .*queued as sink-1/);
    const [mail] = mx.messages;
    expect(mail?.secure).toBe(true);
    expect(mail?.raw.equals(MESSAGE)).toBe(true);
    expect(mail?.envelope).toEqual({ from: "a@sender.test", to: ["b@rcpt.test"] });
    expect(mail?.clientHostname).toBe("relay.sender.test");
  });

  it("delivers in plaintext when the server offers no STARTTLS", async () => {
    const mx = await sink({ tls: "none" });
    const receipt = await transport(request([mx.address]));
    expect(receipt.tls).toBe(false);
    expect(mx.messages[0]?.secure).toBe(false);
  });

  it("retries a failed TLS handshake at once in plaintext on a new connection", async () => {
    const mx = await sink({ tls: "broken" });
    const receipt = await transport(request([mx.address]));
    expect(receipt.tls).toBe(false);
    expect(mx.messages).toHaveLength(1);
    expect(mx.connections).toBe(2);
  });

  it("with TLS required, a server without STARTTLS is a temporary failure and gets nothing", async () => {
    const mx = await sink({ tls: "none" });
    const error = await failure(transport(request([mx.address], { requireTls: true })));
    expect(error.permanent).toBe(false);
    expect(error.message).toContain("does not offer STARTTLS");
    expect(mx.messages).toHaveLength(0);
  });

  it("with TLS required, a failed handshake is not retried in plaintext", async () => {
    const mx = await sink({ tls: "broken" });
    const error = await failure(transport(request([mx.address], { requireTls: true })));
    expect(error.permanent).toBe(false);
    expect(error.message).toContain("TLS handshake");
    expect(mx.connections).toBe(1);
  });

  it("with TLS required, a STARTTLS server still receives the mail", async () => {
    const mx = await sink();
    expect((await transport(request([mx.address], { requireTls: true }))).tls).toBe(true);
  });

  it("moves on to the next host when a connection is refused, naming each host tried", async () => {
    const dead = await closedPort();
    const mx = await sink();
    const tried: string[] = [];
    const receipt = await transport({
      ...request([dead, mx.address]),
      onHost: (h) => tried.push(h),
    });
    expect(receipt.host).toBe(mx.address);
    expect(tried).toEqual([dead, mx.address]);
  });

  it("reports a 5xx at RCPT as permanent, with the SMTP code first", async () => {
    const mx = await sink({ reject: { stage: "rcpt", code: 550, message: "5.1.1 no such user" } });
    const error = await failure(transport(request([mx.address])));
    expect(error).toMatchObject({ permanent: true, smtpCode: 550, host: mx.address, tls: true });
    expect(error.message).toMatch(/^550 5\.1\.1 no such user/);
  });

  it("reports a 4xx at DATA as temporary and does not try the next host", async () => {
    const first = await sink({ reject: { stage: "data", code: 451, message: "4.3.0 try later" } });
    const second = await sink();
    const error = await failure(transport(request([first.address, second.address])));
    expect(error).toMatchObject({ permanent: false, smtpCode: 451, host: first.address });
    expect(error.message).toMatch(/^451 4\.3\.0 try later/);
    expect(second.connections).toBe(0);
  });

  it("times out on a server that never greets, then tries the next host", async () => {
    const stalled = await sink({ stall: "greeting" });
    const mx = await sink();
    const quick = createSmtpTransport({ heloHostname: "relay.sender.test", timeoutMs: 500 });
    const started = Date.now();
    const receipt = await quick(request([stalled.address, mx.address]));
    expect(receipt.host).toBe(mx.address);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  });

  it("times out on a server that never answers DATA, as a temporary failure", async () => {
    const stalled = await sink({ stall: "data", tls: "none" });
    const quick = createSmtpTransport({ heloHostname: "relay.sender.test", timeoutMs: 500 });
    const error = await failure(quick(request([stalled.address])));
    expect(error.permanent).toBe(false);
    expect(error.smtpCode).toBeUndefined();
    expect(error.message).toMatch(/^timeout with 127\.0\.0\.1:\d+/);
  });

  it("fails temporarily when no host can be reached", async () => {
    const dead = await closedPort();
    const error = await failure(transport(request([dead])));
    expect(error.permanent).toBe(false);
    expect(error.message).toContain(`connection error with ${dead}`);
  });
});
