import { sampleValue } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, TestRelay } from "../helpers/relay-harness.js";
import { type Credential, rfc5322, SmtpRelay } from "../smtp/smtp-harness.js";

/** GET /metrics through `inject`, with the given headers. */
function scrape(relay: TestRelay, headers: Record<string, string> = {}) {
  return relay.app.inject({ method: "GET", url: "/metrics", headers });
}

describe("GET /metrics after real traffic", () => {
  let smtpRelay: SmtpRelay;
  let shop: Credential & { clientId: string };
  let authorization: string;
  let text: string;

  beforeAll(async () => {
    // A synchronous relay whose mail reaches SMTP sinks: one accepts, one refuses every recipient.
    smtpRelay = await SmtpRelay.start({
      sinks: {
        "dest.test": { tls: "none" },
        "bounce.test": { reject: { stage: "rcpt", code: 550, message: "5.1.1 no such user" } },
      },
    });
    const { send } = smtpRelay;
    await send.addDomain("shop.test", { limits: { per_hour: 0, per_day: 0 } });
    shop = await smtpRelay.addClient(["shop.test"]);
    ({ authorization } = await send.addClient(["shop.test"]));

    const sent = await send.post(
      "/send",
      { from: "a@shop.test", to: ["x@dest.test", "y@bounce.test"], subject: "hi", text: "hello" },
      { authorization },
    );
    expect(sent.statusCode).toBe(200);
    const refused = await send.post(
      "/send",
      { from: "a@elsewhere.test", to: ["x@dest.test"], subject: "hi", text: "hello" },
      { authorization },
    );
    expect(refused.json().error).toBe("domain_not_allowed");

    const smtp = await smtpRelay.client({ ignoreTLS: true });
    await smtp.login(shop);
    const raw = rfc5322({ From: "a@shop.test", To: "z@dest.test", Subject: "over SMTP" });
    expect(await smtp.send({ from: "a@shop.test", to: ["z@dest.test"] }, raw)).toMatch(/^250 /);
    smtp.quit();
    // Accepted over SMTP, then delivered at once in the background (synchronous mode).
    await send.sinks["dest.test"]?.waitForMessages(2);
    while (send.ledger().filter((event) => event.event === "delivered").length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }

    const response = await scrape(send.relay, { "x-auth-token": ADMIN_TOKEN });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    text = response.body;
  });
  afterAll(() => smtpRelay.close());

  const value = (name: string, labels?: Record<string, string>) => sampleValue(text, name, labels);

  it("counts accepted messages by mode (the SMTP port always queues first)", () => {
    expect(value("relay_messages_accepted_total", { mode: "sync" })).toBe(1);
    expect(value("relay_messages_accepted_total", { mode: "async" })).toBe(1);
  });

  it("counts refused submissions by reason", () => {
    expect(value("relay_messages_rejected_total", { reason: "domain_not_allowed" })).toBe(1);
  });

  it("counts delivery attempts by result and times them", () => {
    expect(value("relay_delivery_attempts_total", { result: "delivered" })).toBe(2);
    expect(value("relay_delivery_attempts_total", { result: "failed" })).toBe(1);
    // Known results are shown from the start, at 0.
    expect(value("relay_delivery_attempts_total", { result: "deferred" })).toBe(0);
    expect(value("relay_delivery_duration_seconds_count")).toBe(3);
    expect(value("relay_delivery_duration_seconds_sum")).toBeGreaterThan(0);
    expect(value("relay_delivery_duration_seconds_bucket", { le: "+Inf" })).toBe(3);
  });

  it("reads the queue's rows per estado at scrape time", () => {
    expect(value("relay_queue_entries", { estado: "sent" })).toBe(2);
    expect(value("relay_queue_entries", { estado: "failed" })).toBe(1);
    expect(value("relay_queue_entries", { estado: "queued" })).toBe(0);
    expect(value("relay_queue_entries", { estado: "sending" })).toBe(0);
  });

  it("counts SMTP sessions and HTTP answers by route pattern and status", () => {
    expect(value("relay_smtp_sessions_total")).toBe(1);
    expect(value("relay_http_requests_total", { route: "/send", status: "200" })).toBe(1);
    expect(value("relay_http_requests_total", { route: "/send", status: "403" })).toBe(1);
    expect(value("relay_http_requests_total", { route: "/domains", status: "201" })).toBe(1);
  });

  it("includes the default process metrics", () => {
    expect(value("process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(text).toContain("# TYPE nodejs_eventloop_lag_seconds gauge");
  });
});

describe("access to GET /metrics", () => {
  let relay: TestRelay;
  afterAll(() => relay.close());

  it("takes the admin token as X-Auth-Token or Authorization: Bearer, and nothing else", async () => {
    relay = await TestRelay.start();
    expect((await scrape(relay)).statusCode).toBe(401);
    expect((await scrape(relay, { "x-auth-token": "wrong" })).statusCode).toBe(401);
    expect((await scrape(relay, { authorization: "Bearer wrong" })).statusCode).toBe(401);
    expect((await scrape(relay, { authorization: `Basic ${ADMIN_TOKEN}` })).statusCode).toBe(401);
    expect((await scrape(relay, { "x-auth-token": ADMIN_TOKEN })).statusCode).toBe(200);
    expect((await scrape(relay, { authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
    // The Bearer form is for /metrics only: the other admin routes keep X-Auth-Token.
    const clients = await relay.app.inject({
      method: "GET",
      url: "/clients",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(clients.statusCode).toBe(401);
    await relay.close();

    // Like the admin routes, open when RELAY_AUTH_TOKEN is unset.
    relay = await TestRelay.start({ env: { RELAY_AUTH_TOKEN: "" } });
    expect((await scrape(relay)).statusCode).toBe(200);
  });
});
