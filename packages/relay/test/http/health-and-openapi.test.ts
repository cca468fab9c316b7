import { afterEach, describe, expect, it } from "vitest";
import { TestRelay } from "../helpers/relay-harness.js";

describe("health, OpenAPI document and the open instance", () => {
  let relay: TestRelay;
  afterEach(() => relay.close());

  it("answers /health without credentials, naming the mode", async () => {
    relay = await TestRelay.start();
    const response = await relay.app.inject({ method: "GET", url: "/health" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: "ok", version: "1.0.0", mode: "sync" });
  });

  it("reports async mode when RELAY_REDIS is present, whatever its value", async () => {
    relay = await TestRelay.start({ env: { RELAY_REDIS: "" } });
    expect((await relay.app.inject({ method: "GET", url: "/health" })).json().mode).toBe("async");
  });

  it("serves an OpenAPI 3 document of every endpoint with its security", async () => {
    relay = await TestRelay.start();
    const response = await relay.app.inject({ method: "GET", url: "/openapi.json" });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toMatch(/^3\./);
    const operations = Object.entries(document.paths as Record<string, object>).flatMap(
      ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        "GET /health",
        "GET /openapi.json",
        "POST /domains",
        "GET /domains",
        "GET /domains/{domain}/instructions",
        "DELETE /domains/{domain}",
        "POST /clients",
        "GET /clients",
        "GET /clients/{client_id}",
        "POST /clients/{client_id}/rotate",
        "PUT /clients/{client_id}/domains",
        "PATCH /clients/{client_id}",
        "DELETE /clients/{client_id}",
        "GET /ratelimit",
        "PUT /ratelimit",
        "GET /allowlist",
        "PUT /allowlist",
      ]),
    );
    const createClient = document.paths["/clients"].post;
    expect(createClient.security).toEqual([{ adminToken: [] }]);
    expect(createClient.requestBody.content["application/json"].schema.required).toEqual([
      "name",
      "domains",
    ]);
    expect(Object.keys(createClient.responses)).toEqual(
      expect.arrayContaining(["201", "400", "401", "403", "429"]),
    );
    expect(document.paths["/health"].get.security).toEqual([]);
    expect(document.paths["/clients/{client_id}"].get.parameters).toEqual([
      { name: "client_id", in: "path", required: true, schema: { type: "string" } },
    ]);
  });

  it("without RELAY_AUTH_TOKEN, opens the admin endpoints and warns at boot", async () => {
    relay = await TestRelay.start({ env: { RELAY_AUTH_TOKEN: "" } });
    const warning = relay.logs.lines.find(
      (line) => line.level === "WARN" && JSON.stringify(line).includes("RELAY_AUTH_TOKEN"),
    );
    expect(warning).toMatchObject({ target: "relay" });
    expect((await relay.app.inject({ method: "GET", url: "/clients" })).statusCode).toBe(200);
  });

  it("with RELAY_AUTH_TOKEN set, gives no such warning", async () => {
    relay = await TestRelay.start();
    expect(JSON.stringify(relay.logs.lines)).not.toContain("RELAY_AUTH_TOKEN");
  });

  it("answers unknown paths with 404 not_found and oversized bodies with 413", async () => {
    relay = await TestRelay.start();
    const unknown = await relay.admin("GET", "/nothing-here");
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe("not_found");
    const huge = await relay.admin("POST", "/clients", { name: "x".repeat(70_000), domains: [] });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().error).toBe("payload_too_large");
  });

  it("refuses a non-JSON content type with 415", async () => {
    relay = await TestRelay.start();
    const response = await relay.app.inject({
      method: "PUT",
      url: "/allowlist",
      headers: { "x-auth-token": "test-admin-token-0123456789", "content-type": "text/plain" },
      payload: "allowlist=1.2.3.4",
    });
    expect(response.statusCode).toBe(415);
    expect(response.json().error).toBe("unsupported_media_type");
  });

  it("logs each request as a JSON line of target relay::http", async () => {
    relay = await TestRelay.start();
    await relay.app.inject({ method: "GET", url: "/health?probe=1" });
    const line = relay.logs.forTarget("relay::http").at(-1);
    expect(line).toMatchObject({
      level: "INFO",
      target: "relay::http",
      fields: { message: "request", method: "GET", path: "/health", status: 200 },
    });
    expect(typeof line?.timestamp).toBe("string");
  });
});
