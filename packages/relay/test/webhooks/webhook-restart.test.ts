import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "../fixtures/http-receiver.js";
import { type SmtpSink, startSmtpSink } from "../fixtures/smtp-sink.js";
import { RelayProcess } from "../helpers/relay-process.js";
import { firstInstanceConfig, within } from "../shared/shared-relays.js";
import { readmeVerifier } from "./readme-verifier.js";

/** The outbox survives the process: `relay serve` killed with an event in flight, then restarted. */
describe("webhook outbox across a crash", () => {
  let dir: { path: string; remove: () => Promise<void> };
  let sink: SmtpSink;
  let receiver: HttpReceiver;
  let relay: RelayProcess | undefined;

  beforeAll(async () => {
    dir = await makeTempDir("relay-webhook-restart-");
    sink = await startSmtpSink({ tls: "none" });
    receiver = await startHttpReceiver("stall");
    const config = await firstInstanceConfig(dir.path, {
      listen: "127.0.0.1:0",
      mx_override: { "dest.test": [sink.address] },
      sync_retry_delays_secs: [0],
    });
    await writeFile(join(dir.path, "relay.json"), JSON.stringify(config));
  });
  afterAll(async () => {
    await relay?.stop("SIGKILL");
    await receiver.close();
    await sink.close();
    await dir.remove();
  });

  const start = async () => {
    relay = await RelayProcess.start({ RELAY_CONFIG: join(dir.path, "relay.json") });
    const listen = relay
      .records()
      .map((record) => record.fields as { message?: string; listen?: string })
      .find((fields) => fields.message === "relay listening")?.listen;
    return (path: string, body?: unknown) =>
      fetch(`http://${listen}${path}`, {
        method: body === undefined ? "GET" : "POST",
        ...(body !== undefined && {
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      });
  };

  it("delivers after the restart the event that was in flight when the relay died", async () => {
    const first = await start();
    const created = (await (
      await first("/webhooks", { url: receiver.url, events: ["delivered"] })
    ).json()) as { id: string; secret: string };
    const sent = await first("/send", {
      from: "a@shop.test",
      to: ["ana@dest.test"],
      subject: "hi",
      text: "hello",
    });
    expect(sent.status).toBe(200);
    const { message_id } = (await sent.json()) as { message_id: string };
    // The receiver holds the request: the event is in flight when the relay is killed.
    await within(5_000, async () => receiver.requests.length === 1, "the first request");
    expect(await relay?.stop("SIGKILL")).toBeNull();

    receiver.mode = "ok";
    const second = await start();
    await within(5_000, async () => receiver.requests.length === 2, "the event after restart");
    const [inFlight, redelivered] = receiver.requests;
    expect(redelivered?.body).toBe(inFlight?.body);
    expect(redelivered?.headers["x-relay-event-id"]).toBe(inFlight?.headers["x-relay-event-id"]);
    const verify = await readmeVerifier();
    const header = String(redelivered?.headers["x-relay-signature"]);
    expect(verify(created.secret, header, redelivered?.body ?? "")).toBe(true);
    expect(JSON.parse(redelivered?.body ?? "{}")).toMatchObject({
      type: "delivered",
      message_id,
      rcpt: "ana@dest.test",
    });
    const view = (await (await second(`/webhooks/${created.id}`)).json()) as {
      pending: number;
      recent_attempts: Array<{ outcome: string; status: number }>;
    };
    expect(view.pending).toBe(0);
    expect(view.recent_attempts).toEqual([
      expect.objectContaining({ outcome: "delivered", status: 200 }),
    ]);
  });
});
