import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, TestRelay } from "../helpers/relay-harness.js";
import { SendRelay } from "../submission/send-harness.js";

describe("request ids and the access log", () => {
  let relay: TestRelay;
  beforeEach(async () => {
    relay = await TestRelay.start();
  });
  afterEach(() => relay.close());

  it("answers every request with X-Request-Id: the caller's when reasonable, else a new one", async () => {
    const kept = await relay.admin("GET", "/clients");
    const theirs = await relay.app.inject({
      method: "GET",
      url: "/clients",
      headers: { "x-auth-token": ADMIN_TOKEN, "x-request-id": "lb-7f3a:42" },
    });
    const unreasonable = await relay.app.inject({
      method: "GET",
      url: "/health",
      headers: { "x-request-id": "x".repeat(200) },
    });
    expect(kept.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(theirs.headers["x-request-id"]).toBe("lb-7f3a:42");
    expect(unreasonable.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("gives refused requests an id too", async () => {
    const refused = await relay.app.inject({
      method: "GET",
      url: "/clients",
      headers: { "x-request-id": "refused-1" },
    });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers["x-request-id"]).toBe("refused-1");
  });

  it("writes the request's id in the file ledger too, as on stdout", async () => {
    await relay.close();
    relay = await TestRelay.start({ config: { ledger_file: "ledger.log" } });
    await relay.app.inject({
      method: "POST",
      url: "/send",
      headers: { "x-request-id": "req-file-1" },
      payload: { from: "a@shop.test", to: ["b@dest.test"], subject: "hi" },
    });
    // The file is appended asynchronously: wait for the line.
    let written = "";
    while (!written.includes("req-file-1")) {
      written = await readFile(join(relay.dir, "ledger.log"), "utf8").catch(() => "");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [line] = written.trim().split("\n");
    const stdout = relay.logs.forTarget("relay::ledger").at(-1);
    expect(JSON.parse(line ?? "").fields).toEqual(stdout?.fields);
    expect(stdout?.fields).toMatchObject({ request_id: "req-file-1" });
  });

  it("writes every log line of a request with its id, the access line in the shared shape", async () => {
    // A send refused for want of a credential: its ledger event is written during the request.
    const response = await relay.app.inject({
      method: "POST",
      url: "/send",
      headers: { "x-request-id": "req-send-1" },
      payload: { from: "a@shop.test", to: ["b@dest.test"], subject: "hi" },
      remoteAddress: "192.0.2.8",
    });
    expect(response.statusCode).toBe(401);
    const lines = relay.logs.lines.filter(
      (line) => (line.fields as Record<string, unknown>).request_id === "req-send-1",
    );
    // RUST_LOG=debug in the harness: the request's start, its ledger event, its access line.
    expect(lines.map((line) => line.target)).toEqual([
      "relay::http",
      "relay::ledger",
      "relay::http",
    ]);
    const ledgerLine = lines[1] as { fields: { ledger: string } };
    expect(JSON.parse(ledgerLine.fields.ledger)).toMatchObject({
      event: "rejected",
      reason: "unauthorized",
    });
    expect(lines.at(-1)).toEqual({
      timestamp: expect.any(String),
      level: "INFO",
      target: "relay::http",
      fields: {
        message: "request",
        method: "POST",
        path: "/send",
        status: 401,
        duration_ms: expect.any(Number),
        peer: "192.0.2.8",
        request_id: "req-send-1",
      },
    });
  });
});

describe("request ids of a send's lines (passed by the relay, not an async context)", () => {
  let relay: SendRelay;
  beforeEach(async () => {
    relay = await SendRelay.start({ sinks: { "dest.test": { tls: "none" } } });
    await relay.addDomain("shop.test");
  });
  afterEach(() => relay.close());

  it("writes every event of a synchronous send, its delivery included, with the request's id", async () => {
    const client = await relay.addClient(["shop.test"]);
    const response = await relay.post(
      "/send",
      { from: "a@shop.test", to: ["b@dest.test"], subject: "hi", text: "hello" },
      { authorization: client.authorization, "x-request-id": "req-sync-1" },
    );
    expect(response.statusCode, response.body).toBe(200);
    const { message_id: messageId } = response.json() as { message_id: string };
    expect(relay.requestIdsOf(messageId)).toEqual([
      ["received", "req-sync-1"],
      ["signed", "req-sync-1"],
      ["mx_resolved", "req-sync-1"],
      ["attempt", "req-sync-1"],
      ["delivered", "req-sync-1"],
    ]);
  });

  it("writes a suppressed recipient's event with the request's id", async () => {
    const client = await relay.addClient(["shop.test"]);
    const added = await relay.relay.app.inject({
      method: "POST",
      url: "/suppressions",
      headers: { authorization: client.authorization },
      payload: { address: "gone@dest.test" },
    });
    expect(added.statusCode, added.body).toBe(201);
    const response = await relay.post(
      "/send-raw",
      {
        from: "a@shop.test",
        to: ["gone@dest.test", "b@dest.test"],
        raw: "From: a@shop.test\r\nTo: b@dest.test\r\n\r\nhello\r\n",
      },
      { authorization: client.authorization, "x-request-id": "req-raw-1" },
    );
    expect(response.statusCode, response.body).toBe(200);
    const { message_id: messageId } = response.json() as { message_id: string };
    const events = relay.requestIdsOf(messageId);
    expect(events).toContainEqual(["suppressed", "req-raw-1"]);
    expect(events.every(([, id]) => id === "req-raw-1")).toBe(true);
  });
});
