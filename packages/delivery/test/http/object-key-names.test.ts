import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signatureOf } from "../../src/webhooks/webhook-signature.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";

/**
 * Names of properties every plain object inherits: a lookup keyed by one of them (a repository,
 * a tag, a bucket, an event) must find nothing, never the built-in (issue 11.4).
 */
const NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];
const KEY = { "x-api-key": TEST_API_KEY };
const SECRET = "webhook-secret-for-key-names";

type Method = "GET" | "POST" | "PATCH" | "DELETE";

describe("names of built-in object properties as keys (sqlite)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp("sqlite", {
      env: { HOSTING_WEBHOOK_SECRET: SECRET, PUBLIC_URL: "https://delivery.test" },
    });
  });
  afterAll(() => t.close());

  const call = (method: Method, url: string, payload?: object) =>
    t.app.inject({ method, url, headers: KEY, ...(payload && { payload }) });

  it.each(NAMES)("%s: every route keyed by owner, repository or tag answers 404", async (name) => {
    const n = encodeURIComponent(name);
    // As a repository and a tag under a real owner, and as the owner too (`__proto__` is not
    // an owner name GitHub allows: some routes refuse it with 400 before any lookup).
    for (const [repo, statuses] of [
      [`acme/${n}`, [404]],
      [`${n}/${n}`, name.includes("_") ? [400, 404] : [404]],
    ] as const) {
      for (const [method, url] of [
        ["POST", `/monitor/check/${repo}`],
        ["GET", `/monitor/dry-run/${repo}`],
        ["GET", `/monitor/history/${repo}`],
        ["POST", `/monitor/reprocess/${repo}`],
        ["POST", `/monitor/reprocess/${repo}/${n}`],
        ["GET", `/monitor/webhooks/${repo}`],
        ["POST", `/monitor/webhooks/${repo}`],
        ["DELETE", `/monitor/webhooks/${repo}/1`],
      ] as const) {
        const response = await call(method, url);
        expect(statuses, `${method} ${url}: ${response.body}`).toContain(response.statusCode);
      }
    }
  });

  it.each(NAMES)("%s: routes keyed by a numeric id refuse it with 400", async (name) => {
    const n = encodeURIComponent(name);
    for (const [method, url, payload] of [
      ["PATCH", `/monitor/repositories/${n}`, { active: false }],
      ["DELETE", `/monitor/repositories/${n}`, undefined],
      ["DELETE", `/monitor/notifications/${n}`, undefined],
      ["DELETE", `/monitor/webhooks/o/r/${n}`, undefined],
    ] as const) {
      const response = await call(method, url, payload);
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(400);
    }
  });

  it.each(NAMES)("%s: registering it as a repository the code host lacks is 404", async (name) => {
    const response = await call("POST", "/monitor/repositories", { repository: `${name}/${name}` });
    // `__proto__` is not a repository name at all.
    expect([400, 404], response.body).toContain(response.statusCode);
  });

  it.each(NAMES)("%s: /files finds no such bucket or file", async (name) => {
    const n = encodeURIComponent(name);
    for (const url of [`/files/${n}/${n}`, `/files/site/${n}`]) {
      const response = await t.app.inject({ method: "GET", url });
      expect(response.statusCode, url).toBe(404);
    }
  });

  it.each(NAMES)(
    "%s: a signed webhook naming it as event, owner or repository is not found",
    async (name) => {
      const send = (event: string, body: string) =>
        t.app.inject({
          method: "POST",
          url: "/webhook/codehost",
          headers: {
            "content-type": "application/json",
            "x-github-event": event,
            "x-github-delivery": `${name}-${event}-${body.length}`,
            "x-hub-signature-256": signatureOf(SECRET, Buffer.from(body)),
          },
          payload: body,
        });
      const ignored = await send(name, "{}");
      expect(ignored.statusCode, ignored.body).toBe(200);
      expect(ignored.json()).toMatchObject({
        ignored: true,
        reason: expect.stringContaining(name),
      });
      const release = JSON.stringify({
        action: "published",
        release: { tag_name: "v1.0.0" },
        repository: { name, owner: { login: "acme" } },
      });
      const unknown = await send("release", release);
      expect(unknown.statusCode, unknown.body).toBe(404);
    },
  );
});
