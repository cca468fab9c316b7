import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parseOverrideEntry } from "../../src/outbound/mx-resolver.js";
import { createSmtpSessionPool } from "../../src/outbound/smtp-session-pool.js";
import { createSmtpTransport } from "../../src/outbound/smtp-transport.js";
import { type SmtpSink, type SmtpSinkOptions, startSmtpSink } from "../fixtures/smtp-sink.js";

const message = (n: number) =>
  Buffer.from(`From: a@sender.test\r\nSubject: ${n}\r\n\r\nbody ${n}\r\n`);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const started = await startSmtpSink({ tls: "none", ...options });
  cleanups.push(() => started.close());
  return started;
}

function pooledTransport() {
  const pool = createSmtpSessionPool();
  cleanups.push(() => pool.close());
  return createSmtpTransport({ heloHostname: "relay.sender.test", timeoutMs: 2000, pool });
}

const request = (address: string, n: number) => ({
  envelopeFrom: "a@sender.test",
  rcpt: `b${n}@rcpt.test`,
  raw: message(n),
  hosts: [parseOverrideEntry(address)],
  requireTls: false,
});

/**
 * A scripted SMTP server that accepts one message per connection, then drops the connection:
 * `at-rset` when the next command (RSET) comes (a server that closed an idle session under the
 * client); `after-data` once the second message's data is in, without answering it.
 */
async function oneMessagePerConnection(drop: "at-rset" | "after-data") {
  const state = { connections: 0, messages: 0 };
  const server: Server = createServer((socket: Socket) => {
    state.connections += 1;
    let inData = false;
    let delivered = false;
    socket.write("220 scripted ESMTP\r\n");
    socket.on("data", (chunk) => {
      for (const line of chunk.toString("latin1").split("\r\n").filter(Boolean)) {
        if (inData) {
          if (line === ".") {
            inData = false;
            state.messages += 1;
            if (delivered) socket.destroy();
            else socket.write("250 2.0.0 Ok\r\n");
            delivered = true;
          }
        } else if (delivered && drop === "at-rset") socket.destroy();
        else if (/^EHLO/i.test(line)) socket.write("250-scripted\r\n250 8BITMIME\r\n");
        else if (/^DATA/i.test(line)) {
          inData = true;
          socket.write("354 go on\r\n");
        } else if (/^QUIT/i.test(line)) socket.end("221 bye\r\n");
        else socket.write("250 2.1.0 Ok\r\n");
      }
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  cleanups.push(() => new Promise<void>((done) => server.close(() => done())));
  const address = server.address();
  return {
    state,
    address: `127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
  };
}

describe("outbound connection reuse", () => {
  it("sends consecutive messages to one host over one connection", async () => {
    const mx = await sink();
    const transport = pooledTransport();
    for (let n = 1; n <= 5; n += 1) await transport(request(mx.address, n));
    expect(mx.messages.map((mail) => mail.envelope.to[0])).toEqual([
      "b1@rcpt.test",
      "b2@rcpt.test",
      "b3@rcpt.test",
      "b4@rcpt.test",
      "b5@rcpt.test",
    ]);
    expect(mx.connections).toBe(1);
  });

  it("does not hold a message's end for the server's delayed ACK (no Nagle wait per message)", async () => {
    const mx = await sink();
    const transport = pooledTransport();
    await transport(request(mx.address, 0));
    const started = performance.now();
    for (let n = 1; n <= 20; n += 1) await transport(request(mx.address, n));
    // With Nagle's algorithm each message's closing ".\r\n" waited for the ACK of its body,
    // which Linux delays by 40 ms: at least 800 ms for these 20 (measured: 48 ms a message).
    expect(performance.now() - started).toBeLessThan(600);
    expect(mx.messages).toHaveLength(21);
    expect(mx.connections).toBe(1);
  });

  it("opens a new connection when the idle one is gone, and sends each message once", async () => {
    const mx = await oneMessagePerConnection("at-rset");
    const transport = pooledTransport();
    for (let n = 1; n <= 3; n += 1) await transport(request(mx.address, n));
    expect(mx.state.messages).toBe(3);
    expect(mx.state.connections).toBe(3);
  });

  it("a connection lost after the data on a reused session is a temporary failure, never resent", async () => {
    const mx = await oneMessagePerConnection("after-data");
    const transport = pooledTransport();
    await transport(request(mx.address, 1));
    await expect(transport(request(mx.address, 2))).rejects.toMatchObject({ permanent: false });
    // The server holds the data of message 2: the attempt ends there, no new connection resends it.
    expect(mx.state.messages).toBe(2);
    expect(mx.state.connections).toBe(1);
  });
});
