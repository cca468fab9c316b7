import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prefersHtml } from "../../src/http/routes/general-routes.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";

describe("which requests get the dashboard at /", () => {
  it.each([
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true],
    ["text/html", true],
    [undefined, false],
    ["*/*", false],
    ["application/json", false],
    ["application/json, text/html;q=0.5", false],
    ["text/html;q=0", false],
  ])("Accept: %s → dashboard %s", (accept, expected) => {
    expect(prefersHtml(accept)).toBe(expected);
  });
});

describe("cross-site requests and the dashboard's pages", () => {
  let t: TestApp;
  let cookie: string;
  beforeAll(async () => {
    t = await createTestApp("sqlite");
    const person = { email: "ops@example.com", password: "a long password", name: "Ops" };
    expect((await t.app.inject({ url: "/auth/registration" })).json()).toEqual({ open: true });
    await t.app.inject({ method: "POST", url: "/auth/register", payload: person });
    expect((await t.app.inject({ url: "/auth/registration" })).json()).toEqual({ open: false });
    const login = await t.app.inject({ method: "POST", url: "/auth/login", payload: person });
    cookie = `access_token=${login.json().token}`;
  });
  afterAll(() => t.close());

  const checkAll = (headers: Record<string, string>) =>
    t.app.inject({
      method: "POST",
      url: "/monitor/check-all",
      headers: { cookie, host: "delivery.test", ...headers },
    });

  it.each([
    [{ "sec-fetch-site": "cross-site" }],
    [{ "sec-fetch-site": "same-site" }],
    [{ origin: "https://evil.example" }],
    [{ origin: "http://delivery.test:8080" }],
    [{ origin: "null" }],
  ])("refuses a state-changing request from another site (%o) with 403", async (headers) => {
    const response = await checkAll(headers);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ error: "Cross-site request refused" });
  });

  it.each([
    [{ "sec-fetch-site": "same-origin", origin: "http://delivery.test" }],
    [{ "sec-fetch-site": "none" }],
    [{}],
  ])("lets the dashboard itself and API clients through (%o)", async (headers) => {
    expect((await checkAll(headers)).statusCode).toBe(200);
  });

  it("lets cross-site reads through (they change nothing) and scripts without browser headers", async () => {
    const read = await t.app.inject({
      url: "/monitor/repositories",
      headers: { cookie, "sec-fetch-site": "cross-site" },
    });
    expect(read.statusCode).toBe(200);
    const script = await t.app.inject({
      method: "POST",
      url: "/monitor/check-all",
      headers: { "x-api-key": TEST_API_KEY },
    });
    expect(script.statusCode).toBe(200);
  });

  it("serves the page and its scripts with a strict CSP, and nothing else under /dashboard", async () => {
    const page = await t.app.inject({ url: "/dashboard/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(page.body).not.toMatch(/https?:\/\//);
    const script = await t.app.inject({ url: "/dashboard/main.js" });
    expect(script.statusCode).toBe(200);
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect((await t.app.inject({ url: "/dashboard/missing.js" })).statusCode).toBe(404);
    expect((await t.app.inject({ url: "/dashboard/..%2Fpackage.json" })).statusCode).toBe(400);
    const welcome = await t.app.inject({ url: "/", headers: { accept: "text/html" } });
    expect(welcome.statusCode).toBe(302);
    expect(welcome.headers.location).toBe("/dashboard/");
    expect((await t.app.inject({ url: "/" })).json()).toMatchObject({
      message: "Release-delivery service",
    });
  });
});
