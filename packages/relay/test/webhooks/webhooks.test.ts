import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "../fixtures/http-receiver.js";
import { within } from "../shared/shared-relays.js";
import { SendRelay } from "../submission/send-harness.js";
import { readmeVerifier, type VerifyRelaySignature } from "./readme-verifier.js";

interface Attempt {
  event_type: string;
  attempt: number;
  status: number | null;
  latency_ms: number;
  error: string | null;
  outcome: string;
}

/** Delivery-event webhooks end to end: real sends, real SMTP sinks, real HTTP receivers. */
describe("delivery-event webhooks", () => {
  let relay: SendRelay;
  let authorization: string;
  let clientId: string;
  let verify: VerifyRelaySignature;
  const receivers: Record<"healthy" | "stalled" | "failing" | "refusals", HttpReceiver> =
    {} as never;
  const endpoints: Record<string, { id: string; secret: string }> = {};

  beforeAll(async () => {
    verify = await readmeVerifier();
    relay = await SendRelay.start({
      sinks: {
        "dest.test": { tls: "none" },
        "bounce.test": { tls: "none", reject: { stage: "rcpt", code: 550, message: "5.1.1 no" } },
      },
    });
    await relay.relay.relay.listen();
    await relay.addDomain("shop.test");
    ({ authorization, clientId } = await relay.addClient(["shop.test"]));
    receivers.healthy = await startHttpReceiver("ok");
    receivers.stalled = await startHttpReceiver("stall");
    receivers.failing = await startHttpReceiver("fail");
    receivers.refusals = await startHttpReceiver("ok");
    // The slow and failing endpoints are registered first: the dispatcher meets them first.
    for (const name of ["stalled", "failing", "healthy"] as const) {
      const response = await relay.relay.admin("POST", "/webhooks", {
        url: receivers[name].url,
        events: ["delivered", "failed"],
      });
      expect(response.statusCode).toBe(201);
      endpoints[name] = response.json();
    }
    const refusals = await relay.relay.admin("POST", "/webhooks", {
      url: receivers.refusals.url,
      events: ["suppressed", "rejected"],
    });
    endpoints.refusals = refusals.json();
  });
  afterAll(async () => {
    await relay?.close();
    await Promise.all(Object.values(receivers).map((receiver) => receiver.close()));
  });

  const endpoint = async (name: string) =>
    (await relay.relay.admin("GET", `/webhooks/${endpoints[name]?.id}`)).json() as {
      pending: number;
      recent_attempts: Attempt[];
    };

  it("shows the secret once, validates endpoints, and removes them", async () => {
    const created = endpoints.healthy;
    expect(created?.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const listed = await relay.relay.admin("GET", "/webhooks");
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(created?.secret);
    expect(listed.json().webhooks).toHaveLength(4);

    for (const body of [
      { url: "ftp://127.0.0.1/hook", events: ["delivered"] },
      { url: "/relative", events: ["delivered"] },
      { url: "http://127.0.0.1/hook", events: ["opened"] },
      { url: "http://127.0.0.1/hook", events: [] },
      { url: "http://127.0.0.1/hook", events: ["failed", "failed"] },
    ]) {
      const refused = await relay.relay.admin("POST", "/webhooks", body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
    }
    const extra = await relay.relay.admin("POST", "/webhooks", {
      url: "https://hooks.example/x",
      events: ["rejected"],
    });
    const { id } = extra.json() as { id: string };
    expect((await relay.relay.admin("DELETE", `/webhooks/${id}`)).statusCode).toBe(200);
    expect((await relay.relay.admin("DELETE", `/webhooks/${id}`)).statusCode).toBe(404);
    expect((await relay.relay.admin("GET", `/webhooks/${id}`)).statusCode).toBe(404);
    const unauthenticated = await relay.app.inject({ method: "GET", url: "/webhooks" });
    expect(unauthenticated.statusCode).toBe(401);
  });

  it("POSTs signed events for a delivered and a failed recipient, unhindered by a stalled and a failing endpoint", async () => {
    const started = Date.now();
    const response = await relay.post(
      "/send",
      {
        from: "a@shop.test",
        to: ["ana@dest.test", "bob@bounce.test"],
        subject: "hi",
        text: "hello",
        tags: ["welcome"],
        metadata: { user: "42" },
      },
      { authorization },
    );
    // The mail path does not wait for any endpoint (the stalled one holds its request 10 s).
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(response.statusCode).toBe(200);
    const { message_id } = response.json() as { message_id: string };

    const took = await within(
      3_000,
      async () => receivers.healthy.requests.length >= 2,
      "two events at the healthy endpoint",
    );
    expect(took).toBeLessThan(3_000);
    const secret = endpoints.healthy?.secret ?? "";
    const events = receivers.healthy.requests.map((request) => {
      const header = String(request.headers["x-relay-signature"]);
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verify(secret, header, request.body)).toBe(true);
      expect(verify(endpoints.failing?.secret ?? "", header, request.body)).toBe(false);
      const event = JSON.parse(request.body) as Record<string, unknown>;
      expect(request.headers["x-relay-event"]).toBe(event.type);
      expect(request.headers["x-relay-event-id"]).toBe(event.id);
      return event;
    });
    const byRcpt = Object.fromEntries(events.map((event) => [event.rcpt, event]));
    const common = { message_id, client_id: clientId, tags: ["welcome"], metadata: { user: "42" } };
    expect(byRcpt["ana@dest.test"]).toMatchObject({
      ...common,
      type: "delivered",
      smtp_response: expect.stringMatching(/^250/),
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(byRcpt["bob@bounce.test"]).toMatchObject({
      ...common,
      type: "failed",
      permanent: true,
      error: expect.stringContaining("550"),
    });
    // The same two events reached the stalled and the failing endpoint too.
    expect(receivers.stalled.requests).toHaveLength(2);
    expect(receivers.failing.requests.map((request) => request.body).sort()).toEqual(
      receivers.healthy.requests.map((request) => request.body).sort(),
    );
    const healthy = await endpoint("healthy");
    expect(healthy.pending).toBe(0);
    expect(healthy.recent_attempts).toEqual([
      expect.objectContaining({ status: 200, error: null, outcome: "delivered", attempt: 1 }),
      expect.objectContaining({ status: 200, error: null, outcome: "delivered", attempt: 1 }),
    ]);
  });

  it("retries an endpoint that answered 500 after its backoff, recording each attempt", async () => {
    await within(
      12_000,
      async () =>
        (await endpoint("failing")).recent_attempts.filter((attempt) => attempt.attempt === 2)
          .length === 2,
      "the second attempts at the failing endpoint",
    );
    const failing = await endpoint("failing");
    expect(failing.pending).toBe(2);
    for (const attempt of failing.recent_attempts) {
      expect(attempt).toMatchObject({ status: 500, error: "HTTP 500", outcome: "retrying" });
      expect(attempt.latency_ms).toBeGreaterThanOrEqual(0);
    }
    expect(receivers.failing.requests).toHaveLength(4);
  });

  it("records a request the stalled endpoint never answers as a timeout, to retry", async () => {
    // Full collections while the requests wait (the relay runs in this process): a timeout that
    // only a collectable signal holds would never fire (Node 20, `webhook-dispatcher.ts`).
    setFlagsFromString("--expose-gc");
    const collect = runInNewContext("gc") as () => void;
    await within(
      15_000,
      async () => {
        collect();
        return (await endpoint("stalled")).recent_attempts.length === 2;
      },
      "the timed-out attempts at the stalled endpoint",
    );
    for (const attempt of (await endpoint("stalled")).recent_attempts) {
      expect(attempt).toMatchObject({
        status: null,
        error: "no answer within 10000 ms",
        outcome: "retrying",
      });
      expect(attempt.latency_ms).toBeGreaterThanOrEqual(9_900);
    }
  });

  it("sends suppressed and rejected events to the endpoint subscribed to them, with what is known", async () => {
    const send = (to: string, tags: string[]) =>
      relay.post(
        "/send",
        { from: "a@shop.test", to: [to], subject: "hi", text: "hello", tags },
        { authorization },
      );
    // A permanent failure suppresses carl@bounce.test for this client; the next send skips him.
    expect((await send("carl@bounce.test", ["first"])).json().results).toEqual([
      expect.objectContaining({ ok: false }),
    ]);
    const later = await send("carl@bounce.test", ["retry"]);
    expect(later.json().results).toEqual([
      expect.objectContaining({ to: "carl@bounce.test", ok: false }),
    ]);
    const refused = await relay.post(
      "/send",
      { from: "a@unknown.test", to: ["ana@dest.test"], subject: "x", text: "y" },
      { authorization },
    );
    expect(refused.statusCode).toBe(403);
    await within(3_000, async () => receivers.refusals.requests.length >= 2, "two refusals");
    const byType = Object.fromEntries(
      receivers.refusals.requests.map((request) => {
        const header = String(request.headers["x-relay-signature"]);
        expect(verify(endpoints.refusals?.secret ?? "", header, request.body)).toBe(true);
        const event = JSON.parse(request.body) as { type: string };
        return [event.type, event];
      }),
    );
    expect(byType.suppressed).toMatchObject({
      message_id: later.json().message_id,
      rcpt: "carl@bounce.test",
      client_id: clientId,
      // Read from the message's `received` event: a suppressed recipient has no queue row.
      tags: ["retry"],
      reason: expect.stringContaining("550"),
    });
    expect(byType.rejected).toMatchObject({
      rcpt: null,
      reason: "domain_not_allowed",
      http_status: 403,
      tags: [],
      metadata: {},
    });
    // The other endpoints did not subscribe to these types.
    for (const request of receivers.healthy.requests) {
      expect(JSON.parse(request.body).type).toMatch(/^(delivered|failed)$/);
    }
  });

  it("never writes an endpoint's secret to the logs", () => {
    const logged = JSON.stringify(relay.relay.logs.lines);
    for (const endpoint of Object.values(endpoints)) expect(logged).not.toContain(endpoint.secret);
  });

  it("forgets an endpoint removed while its request is in flight, without an error", async () => {
    const held = await startHttpReceiver("stall");
    const created = await relay.relay.admin("POST", "/webhooks", {
      url: held.url,
      events: ["delivered"],
    });
    const { id } = created.json() as { id: string };
    const sent = await relay.post(
      "/send",
      { from: "a@shop.test", to: ["dora@dest.test"], subject: "hi", text: "hello" },
      { authorization },
    );
    expect(sent.statusCode).toBe(200);
    await within(3_000, async () => held.requests.length === 1, "the held request");
    expect((await relay.relay.admin("DELETE", `/webhooks/${id}`)).statusCode).toBe(200);
    held.release(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const rows = relay.relay.relay.db
      .prepare(
        "SELECT (SELECT count(*) FROM webhook_outbox WHERE endpoint_id = ?) + (SELECT count(*) FROM webhook_attempts WHERE endpoint_id = ?) AS n",
      )
      .get(id, id) as { n: number };
    expect(rows.n).toBe(0);
    expect(
      relay.relay.logs.forTarget("relay::webhooks").filter((line) => line.level === "ERROR"),
    ).toEqual([]);
    await held.close();
  });
});
