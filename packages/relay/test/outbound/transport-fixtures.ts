import { createServer, type Server } from "node:net";
import { parseOverrideEntry } from "../../src/outbound/mx-resolver.js";
import type { SmtpDeliveryRequest } from "../../src/outbound/smtp-transport.js";
import { type SmtpSink, type SmtpSinkOptions, startSmtpSink } from "../fixtures/smtp-sink.js";

/** What the transport tests deliver: a line opening with a dot included. */
export const MESSAGE = Buffer.from(
  "From: a@sender.test\r\nTo: b@rcpt.test\r\nSubject: hello\r\n\r\nbody line\r\n.leading dot\r\n",
);

/** One delivery of `MESSAGE` to `hosts` (override entries, `host:port`). */
export function request(
  hosts: string[],
  options: Partial<Pick<SmtpDeliveryRequest, "requireTls" | "onHost">> = {},
): SmtpDeliveryRequest {
  return {
    envelopeFrom: "a@sender.test",
    rcpt: "b@rcpt.test",
    raw: MESSAGE,
    hosts: hosts.map(parseOverrideEntry),
    requireTls: options.requireTls ?? false,
    ...(options.onHost && { onHost: options.onHost }),
  };
}

/** Sinks started by a test file, closed together (call `closeAll` in `afterEach`). */
export function sinkRegistry() {
  const sinks: SmtpSink[] = [];
  return {
    async sink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
      const started = await startSmtpSink(options);
      sinks.push(started);
      return started;
    },
    closeAll: () => Promise.all(sinks.splice(0).map((s) => s.close())),
  };
}

/** A port on loopback where nothing listens (connection refused). */
export async function closedPort(): Promise<string> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
}
