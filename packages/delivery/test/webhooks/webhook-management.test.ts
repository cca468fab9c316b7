import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { createHooksStub, type HooksStub } from "./github-hooks-stub.js";

const SECRET = "the-shared-webhook-secret";
const PUBLIC_URL = "https://delivery.example.test";
const asApiKey = { "x-api-key": TEST_API_KEY };

describe("webhook management on the code host", () => {
  let t: TestApp;
  let hooks: HooksStub;

  beforeAll(async () => {
    hooks = createHooksStub();
    const stub = await startGithubStub({ routes: [hooks.routes] });
    t = await createTestApp("sqlite", {
      stub,
      env: { HOSTING_WEBHOOK_SECRET: SECRET, PUBLIC_URL },
    });
    t.stub.addRepository("acme/widget");
  });
  afterAll(async () => {
    await t.close();
    await t.stub.close();
  });

  it("creates a release-only JSON webhook to the receiver, signed with the secret", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/monitor/webhooks/acme/widget",
      headers: asApiKey,
    });
    expect(response.statusCode).toBe(200);
    const created = hooks.hooks.get("acme/widget")?.[0];
    expect(created).toMatchObject({
      name: "web",
      active: true,
      events: ["release"],
      config: {
        url: `${PUBLIC_URL}/webhook/codehost`,
        content_type: "json",
        secret: SECRET,
        insecure_ssl: "0",
      },
    });
    expect(response.json()).toEqual({
      success: true,
      webhook: {
        id: created?.id,
        active: true,
        events: ["release"],
        created_at: created?.created_at,
      },
    });
  });

  it("answers 409 when the same webhook already exists", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/monitor/webhooks/acme/widget",
      headers: asApiKey,
    });
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toContain("already exists");
  });

  it("lists the repository's webhooks with their configuration, never the secret", async () => {
    const response = await t.app.inject({
      method: "GET",
      url: "/monitor/webhooks/acme/widget",
      headers: asApiKey,
    });
    expect(response.statusCode).toBe(200);
    const created = hooks.hooks.get("acme/widget")?.[0];
    expect(response.json()).toEqual({
      success: true,
      repository: "acme/widget",
      total: 1,
      webhooks: [
        {
          id: created?.id,
          active: true,
          events: ["release"],
          config: { url: `${PUBLIC_URL}/webhook/codehost`, content_type: "json" },
          created_at: created?.created_at,
        },
      ],
    });
    expect(response.body).not.toContain(SECRET);
  });

  it("lists every page of a repository with many webhooks", async () => {
    t.stub.addRepository("acme/busy");
    hooks.hooks.set(
      "acme/busy",
      Array.from({ length: 130 }, (_, i) => ({
        id: 900_000 + i,
        name: "web",
        active: i % 2 === 0,
        events: ["push"],
        config: { url: `https://elsewhere.test/${i}`, content_type: "form" },
        created_at: "2026-01-01T00:00:00Z",
      })),
    );
    const response = await t.app.inject({
      method: "GET",
      url: "/monitor/webhooks/acme/busy",
      headers: asApiKey,
    });
    expect(response.json().total).toBe(130);
  });

  it("deletes a webhook, then answers 404 for it", async () => {
    const id = hooks.hooks.get("acme/widget")?.[0]?.id;
    const deleted = await t.app.inject({
      method: "DELETE",
      url: `/monitor/webhooks/acme/widget/${id}`,
      headers: asApiKey,
    });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({
      success: true,
      message: `Webhook ${id} deleted from acme/widget`,
    });
    expect(hooks.hooks.get("acme/widget")).toEqual([]);

    const again = await t.app.inject({
      method: "DELETE",
      url: `/monitor/webhooks/acme/widget/${id}`,
      headers: asApiKey,
    });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error: `Webhook ${id} not found on acme/widget` });
  });

  it("answers 404 for a repository the code host does not know", async () => {
    for (const [method, url] of [
      ["POST", "/monitor/webhooks/acme/ghost"],
      ["GET", "/monitor/webhooks/acme/ghost"],
      ["DELETE", "/monitor/webhooks/acme/ghost/12"],
    ] as const) {
      const response = await t.app.inject({ method, url, headers: asApiKey });
      expect(response.statusCode).toBe(404);
    }
  });

  it("answers 502 when the code host fails", async () => {
    t.stub.failNext(4, 503);
    const response = await t.app.inject({
      method: "GET",
      url: "/monitor/webhooks/acme/widget",
      headers: asApiKey,
    });
    expect(response.statusCode).toBe(502);
  });

  it("documents these endpoints, the receiver and the notifications in /openapi.json", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
    const security = (path: string, method: string) => doc.paths[path]?.[method]?.security;
    expect(security("/webhook/codehost", "post")).toEqual([]);
    for (const [path, method] of [
      ["/monitor/webhooks/{owner}/{repo}", "post"],
      ["/monitor/webhooks/{owner}/{repo}", "get"],
      ["/monitor/webhooks/{owner}/{repo}/{webhook_id}", "delete"],
      ["/monitor/notifications/cleanup", "post"],
      ["/monitor/notifications/{id}", "delete"],
      ["/monitor/telegram/test", "post"],
    ] as const) {
      expect(security(path, method)).toEqual([{ apiKey: [] }]);
    }
    expect(security("/monitor/notifications", "get")).toHaveLength(3);
  });

  it("is reserved to the API key", async () => {
    const anonymous = await t.app.inject({ method: "GET", url: "/monitor/webhooks/acme/widget" });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error: "Unauthorized" });
  });
});

describe("webhook creation without PUBLIC_URL", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp("sqlite", { env: { HOSTING_WEBHOOK_SECRET: SECRET } });
    t.stub.addRepository("acme/widget");
  });
  afterAll(() => t.close());

  it("answers 503 naming what is missing, without calling the code host", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/monitor/webhooks/acme/widget",
      headers: asApiKey,
    });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      error: "PUBLIC_URL and HOSTING_WEBHOOK_SECRET must be set to create webhooks",
    });
    expect(t.stub.requestsTo("/repos/acme/widget/hooks")).toHaveLength(0);
  });
});
