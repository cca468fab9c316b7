import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SmtpSink, startSmtpSink } from "../fixtures/smtp-sink.js";
import {
  createClient,
  createSharedDatabase,
  firstInstanceConfig,
  mariadbAvailable,
  rawMessage,
  type SharedInstance,
  startInstance,
  type TestSharedDatabase,
  within,
} from "./shared-relays.js";

// Idempotency keys and GET /messages on two relay processes sharing one MariaDB database: a key
// taken on one instance holds on the other, and either instance shows any message.
const available = await mariadbAvailable();
const ASYNC = { RELAY_REDIS: "" };
const basic = (secret: string) => `Basic ${Buffer.from(secret).toString("base64")}`;

describe.skipIf(!available)("idempotency keys and message status across instances", () => {
  let database: TestSharedDatabase;
  let sink: SmtpSink;
  let a: SharedInstance;
  let b: SharedInstance;
  let credential: string;

  beforeAll(async () => {
    database = await createSharedDatabase();
    sink = await startSmtpSink({ tls: "none" });
    // a never drains (no ticker); b drains every half second.
    a = await startInstance("a", database.url, {
      env: ASYNC,
      config: (dir) => firstInstanceConfig(dir, { tick_interval_secs: 0 }),
    });
    b = await startInstance("b", database.url, {
      env: ASYNC,
      config: () => ({ tick_interval_secs: 0.5, mx_override: { "dest.test": [sink.address] } }),
    });
    credential = await createClient(a);
    // b knows the client once its refresh (every second) has read it.
    await within(
      5_000,
      async () =>
        (
          await fetch(`${b.base}/messages/none@shop.test`, {
            headers: { authorization: basic(credential) },
          })
        ).status === 404,
      "the client known on b",
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a, b].map((instance) => instance?.stop("SIGKILL")));
    await sink?.close();
    await database?.drop();
  });

  const post = async (on: SharedInstance, body: unknown, key: string) => {
    const response = await fetch(`${on.base}/send-raw`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: basic(credential),
        "idempotency-key": key,
      },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      replayed: response.headers.get("idempotent-replayed"),
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  it("sends once for one key sent to both instances at once, and replays on either", async () => {
    const body = rawMessage("vendas@shop.test", "ana@dest.test");
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, index) => post(index % 2 ? b : a, body, "shared-burst")),
    );
    const firsts = responses.filter((r) => r.status === 202 && r.replayed === null);
    expect(firsts).toHaveLength(1);
    for (const response of responses.filter((r) => r !== firsts[0])) {
      if (response.status === 409) expect(response.body.error).toBe("in_progress");
      else expect(response).toMatchObject({ status: 202, replayed: "true", body: firsts[0]?.body });
    }
    for (const on of [a, b]) {
      expect(await post(on, body, "shared-burst")).toMatchObject({
        status: 202,
        replayed: "true",
        body: firsts[0]?.body,
      });
    }
    const other = await post(b, rawMessage("vendas@shop.test", "bruno@dest.test"), "shared-burst");
    expect(other).toMatchObject({ status: 422, body: { error: "idempotency_key_reused" } });
    await sink.waitForMessages(1, 20_000);
    // b drains every half second: a second copy would have arrived by now.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(sink.messages).toHaveLength(1);
  });

  it("shows on one instance the status, tags and metadata of a message accepted by the other", async () => {
    const sent = await fetch(`${a.base}/send`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: basic(credential) },
      body: JSON.stringify({
        from: "vendas@shop.test",
        to: ["carla@dest.test"],
        subject: "status",
        text: "x",
        tags: ["shared"],
        metadata: { order_id: "7" },
      }),
    });
    expect(sent.status).toBe(202);
    const { message_id } = (await sent.json()) as { message_id: string };
    const statusOn = async (on: SharedInstance, secret: string) =>
      fetch(`${on.base}/messages/${encodeURIComponent(message_id)}`, {
        headers: { authorization: basic(secret) },
      });
    await within(
      10_000,
      async () => {
        const status = (await (await statusOn(b, credential)).json()) as {
          recipients: Array<{ estado: string }>;
        };
        return status.recipients[0]?.estado === "sent";
      },
      "the message shown as sent on b",
    );
    const status = await (await statusOn(b, credential)).json();
    expect(status).toMatchObject({
      message_id,
      tags: ["shared"],
      metadata: { order_id: "7" },
      recipients: [{ rcpt: "carla@dest.test", estado: "sent", attempts: 1, last_error: null }],
    });
    const stranger = await createClient(a);
    expect((await statusOn(a, stranger)).status).toBe(404);
    expect((await statusOn(a, credential)).status).toBe(200);
  });
});
