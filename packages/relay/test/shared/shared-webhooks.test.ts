import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "../fixtures/http-receiver.js";
import { type SmtpSink, startSmtpSink } from "../fixtures/smtp-sink.js";
import { readmeVerifier } from "../webhooks/readme-verifier.js";
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

// Webhooks on the shared database: one set of endpoints, one outbox every instance sends from
// (claims with SKIP LOCKED and a lease), events journaled locally until they reach it.
const available = await mariadbAvailable();

describe.skipIf(!available)("webhooks shared by several relay instances", () => {
  let database: TestSharedDatabase;
  let sink: SmtpSink;
  const instances: SharedInstance[] = [];
  const receivers: HttpReceiver[] = [];

  beforeEach(async () => {
    database = await createSharedDatabase();
    sink = await startSmtpSink({ tls: "none" });
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.stop("SIGKILL")));
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
    await sink.close();
    await database.drop();
  });

  async function instance(name: string): Promise<SharedInstance> {
    const started = await startInstance(name, database.url, {
      config: (dir) =>
        firstInstanceConfig(dir, {
          mx_override: { "dest.test": [sink.address] },
          sync_retry_delays_secs: [0],
        }),
    });
    instances.push(started);
    return started;
  }

  async function receiver(mode: "ok" | "stall"): Promise<HttpReceiver> {
    const started = await startHttpReceiver(mode);
    receivers.push(started);
    return started;
  }

  const register = async (on: SharedInstance, url: string) =>
    (await (await on.request("POST", "/webhooks", { url, events: ["delivered"] })).json()) as {
      id: string;
      secret: string;
    };

  it("an endpoint registered on one instance gets each event of every instance once, signed", async () => {
    const [a, b] = [await instance("a"), await instance("b")];
    const healthy = await receiver("ok");
    const endpoint = await register(a, healthy.url);
    const listed = (await (await b.request("GET", "/webhooks")).json()) as {
      webhooks: Array<{ id: string }>;
    };
    expect(listed.webhooks.map((webhook) => webhook.id)).toEqual([endpoint.id]);

    const credential = await createClient(a);
    const sent: string[] = [];
    const send = (on: SharedInstance, index: number) =>
      on.request(
        "POST",
        "/send-raw",
        rawMessage("vendas@shop.test", `r${index}@dest.test`),
        credential,
      );
    // b knows the client once its refresh has read it (within a second or so).
    const clientId = credential.split(":")[0];
    await within(5_000, async () => (await b.request("GET", `/clients/${clientId}`)).ok, "b");
    for (const [index, on] of [a, b, a, b, a, b].entries()) {
      const response = await send(on, index);
      expect(response.status).toBe(200);
      sent.push(((await response.json()) as { message_id: string }).message_id);
    }
    await within(5_000, async () => healthy.requests.length >= 6, "six events");
    // Both dispatchers ran: give a second copy the time to show up, if there were one.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(healthy.requests).toHaveLength(6);
    const verify = await readmeVerifier();
    const events = healthy.requests.map((request) => {
      expect(
        verify(endpoint.secret, String(request.headers["x-relay-signature"]), request.body),
      ).toBe(true);
      return JSON.parse(request.body) as { id: string; message_id: string; client_id: string };
    });
    expect(new Set(events.map((event) => event.id)).size).toBe(6);
    expect(events.map((event) => event.message_id).sort()).toEqual([...sent].sort());
    expect(new Set(events.map((event) => event.client_id))).toEqual(new Set([clientId]));
    const rows = await database.query<Array<{ n: number }>>(
      "SELECT count(*) AS n FROM relay_webhook_outbox",
    );
    expect(Number(rows[0]?.n)).toBe(0);
  });

  it("an event in flight at an instance that dies is sent by another once its lease lapses", async () => {
    const a = await instance("a");
    const hook = await receiver("stall");
    const endpoint = await register(a, hook.url);
    const credential = await createClient(a);
    const sent = await a.request(
      "POST",
      "/send-raw",
      rawMessage("vendas@shop.test", "ana@dest.test"),
      credential,
    );
    expect(sent.status).toBe(200);
    // a alone runs: its request is the one the receiver holds when a is killed.
    await within(5_000, async () => hook.requests.length === 1, "the first request");
    await a.stop("SIGKILL");
    instances.splice(instances.indexOf(a), 1);
    hook.mode = "ok";
    const killedAt = Date.now();
    const b = await instance("b");
    // The lease of a's claim (10 s timeout + 5 s) lapses, then b takes the row.
    await within(20_000, async () => hook.requests.length >= 2, "the event again, from b");
    expect(Date.now() - killedAt).toBeGreaterThan(8_000);
    const [first, again] = hook.requests;
    expect(again?.body).toBe(first?.body);
    // Polled: the receiver counts the request before b has its answer and settles the row.
    const view = async () => (await b.request("GET", `/webhooks/${endpoint.id}`)).json();
    await expect.poll(view).toMatchObject({
      pending: 0,
      recent_attempts: [{ outcome: "delivered", status: 200 }],
    });
  });
});
