import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("request ids and the access log", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp("sqlite", { env: { HOSTING_WEBHOOK_SECRET: "webhook-secret" } });
  });
  afterAll(() => t.close());

  it("answers every request with X-Request-Id: the caller's when reasonable, else a new one", async () => {
    const theirs = await t.app.inject({
      method: "GET",
      url: "/monitor/repositories",
      headers: { "x-api-key": TEST_API_KEY, "x-request-id": "lb-7f3a:42" },
    });
    const generated = await t.app.inject({ method: "GET", url: "/health" });
    const unreasonable = await t.app.inject({
      method: "GET",
      url: "/",
      headers: { "x-request-id": "has spaces" },
    });
    expect(theirs.headers["x-request-id"]).toBe("lb-7f3a:42");
    expect(generated.headers["x-request-id"]).toMatch(UUID);
    expect(unreasonable.headers["x-request-id"]).toMatch(UUID);
  });

  it("gives refused and unknown requests an id too", async () => {
    const refused = await t.app.inject({
      method: "GET",
      url: "/monitor/repositories",
      headers: { "x-request-id": "refused-1" },
    });
    const unknown = await t.app.inject({ method: "GET", url: "/nowhere" });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers["x-request-id"]).toBe("refused-1");
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers["x-request-id"]).toMatch(UUID);
  });

  it("writes every log line of a request with its id, the access line in the shared shape", async () => {
    // A webhook delivery with a wrong signature: the receiver logs the refusal during the request.
    const response = await t.app.inject({
      method: "POST",
      url: "/webhook/codehost",
      headers: {
        "x-request-id": "hook-1",
        "x-github-event": "release",
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
      },
      payload: { action: "published" },
      remoteAddress: "192.0.2.9",
    });
    expect(response.statusCode).toBe(401);
    const lines = t.logs.lines.filter(
      (line) => (line.fields as Record<string, unknown>).request_id === "hook-1",
    );
    expect(lines.map((line) => line.target)).toEqual(["delivery::webhooks", "delivery::http"]);
    expect(lines.at(-1)).toEqual({
      timestamp: expect.any(String),
      level: "INFO",
      target: "delivery::http",
      fields: {
        message: "request",
        method: "POST",
        path: "/webhook/codehost",
        status: 401,
        duration_ms: expect.any(Number),
        peer: "192.0.2.9",
        request_id: "hook-1",
      },
    });
  });
});
