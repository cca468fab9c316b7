import cookie from "@fastify/cookie";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { installAccessControl, setScopeAccess } from "../../src/http/access-control.js";
import { TokenService } from "../../src/users/token-service.js";
import { createTestApp, TEST_API_KEY, TEST_JWT_SECRET, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";

type Method = "GET" | "POST" | "PATCH" | "DELETE";
type Level = "public" | "user" | "apiKey" | "session";

/** Every endpoint of this service with the access level the specification gives it. */
const ENDPOINTS: ReadonlyArray<[Method, string, Level, object?]> = [
  ["GET", "/", "public"],
  ["GET", "/health", "public"],
  ["GET", "/openapi.json", "public"],
  ["GET", "/monitor/status", "public"],
  ["GET", "/monitor/repositories", "user"],
  ["POST", "/monitor/repositories", "apiKey", { repository: "acme/missing" }],
  ["PATCH", "/monitor/repositories/999", "apiKey", { active: false }],
  ["DELETE", "/monitor/repositories/999", "apiKey"],
  ["GET", "/auth/check", "session"],
  ["GET", "/auth/profile", "session"],
];

const user = { email: "ops@example.com", password: "a long password", name: "Ops" };

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`access levels (${dialect})`, () => {
    let t: TestApp;
    let jwt: string;

    beforeAll(async () => {
      t = await createTestApp(dialect);
      await t.app.inject({ method: "POST", url: "/auth/register", payload: user });
      const login = await t.app.inject({ method: "POST", url: "/auth/login", payload: user });
      jwt = login.json().token;
    });
    afterAll(() => t.close());

    const call = (method: Method, url: string, body: object | undefined, credential: string) => {
      const headers: Record<string, string> = {};
      const cookies: Record<string, string> = {};
      if (credential === "api key") headers["x-api-key"] = TEST_API_KEY;
      if (credential === "wrong api key") headers["x-api-key"] = "not-the-key";
      if (credential === "jwt cookie") cookies.access_token = jwt;
      if (credential === "tampered jwt") cookies.access_token = `${jwt.slice(0, -4)}AAAA`;
      return t.app.inject({ method, url, headers, cookies, ...(body ? { payload: body } : {}) });
    };

    /** What each level answers to each credential: a status, or "allowed" (neither 401 nor 403). */
    const EXPECTED: Record<Level, Record<string, number | "allowed">> = {
      public: {
        none: "allowed",
        "wrong api key": "allowed",
        "api key": "allowed",
        "jwt cookie": "allowed",
        "tampered jwt": "allowed",
      },
      user: {
        none: 401,
        "wrong api key": 401,
        "api key": "allowed",
        "jwt cookie": "allowed",
        "tampered jwt": 401,
      },
      apiKey: {
        none: 401,
        "wrong api key": 401,
        "api key": "allowed",
        "jwt cookie": 403,
        "tampered jwt": 401,
      },
      session: {
        none: 401,
        "wrong api key": 401,
        "api key": 401,
        "jwt cookie": "allowed",
        "tampered jwt": 401,
      },
    };

    for (const [method, url, level, body] of ENDPOINTS) {
      for (const [credential, expected] of Object.entries(EXPECTED[level])) {
        it(`${method} ${url} (${level}) with ${credential}: ${expected}`, async () => {
          const response = await call(method, url, body, credential);
          if (expected === "allowed") {
            expect([401, 403]).not.toContain(response.statusCode);
          } else {
            expect(response.statusCode).toBe(expected);
            expect(response.json()).toEqual({
              error: expected === 403 ? "API key required" : "Unauthorized",
            });
          }
        });
      }
    }

    it("refuses an unauthenticated write before reading its body", async () => {
      const response = await t.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers: { "content-type": "application/json" },
        payload: "{not json",
      });
      expect(response.statusCode).toBe(401);
    });
  });
}

describe("without API_KEY configured", () => {
  let t: TestApp;
  let jwt: string;
  beforeAll(async () => {
    t = await createTestApp("sqlite", { env: { API_KEY: undefined } });
    await t.app.inject({ method: "POST", url: "/auth/register", payload: user });
    jwt = (await t.app.inject({ method: "POST", url: "/auth/login", payload: user })).json().token;
  });
  afterAll(() => t.close());

  it("API-key-only endpoints refuse every key", async () => {
    for (const key of [TEST_API_KEY, "", "undefined"]) {
      const response = await t.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers: { "x-api-key": key },
        payload: { repository: "acme/app" },
      });
      expect(response.statusCode).toBe(401);
    }
  });

  it("and tell a logged-in user that the API key is required", async () => {
    const response = await t.app.inject({
      method: "DELETE",
      url: "/monitor/repositories/1",
      cookies: { access_token: jwt },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ error: "API key required" });
  });

  it("registration after the first user is closed", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/auth/register",
      headers: { "x-api-key": TEST_API_KEY },
      payload: { ...user, email: "second@example.com" },
    });
    expect(response.statusCode).toBe(401);
  });
});

describe("route declarations", () => {
  const bareApp = async () => {
    const app = Fastify();
    await app.register(cookie);
    installAccessControl(app, {
      apiKey: TEST_API_KEY,
      tokens: new TokenService(TEST_JWT_SECRET, systemClock),
    });
    return app;
  };

  it("a route without an access level cannot be registered", async () => {
    const app = await bareApp();
    expect(() => app.get("/open", async () => "oops")).toThrow(/does not declare config.access/);
    await app.close();
  });

  it("a plugin scope can give the routes a third-party plugin registers a level", async () => {
    const app = await bareApp();
    await app.register(async (scope) => {
      setScopeAccess(scope, "apiKey");
      scope.get("/third-party", async () => ({ ok: true }));
    });
    expect((await app.inject({ method: "GET", url: "/third-party" })).statusCode).toBe(401);
    const allowed = await app.inject({
      method: "GET",
      url: "/third-party",
      headers: { "x-api-key": TEST_API_KEY },
    });
    expect(allowed.statusCode).toBe(200);
    await app.close();
  });
});
