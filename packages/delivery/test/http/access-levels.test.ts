import { randomUUID } from "node:crypto";
import diagnostics from "node:diagnostics_channel";
import cookie from "@fastify/cookie";
import { systemClock } from "@rd/common";
import Fastify, { type FastifyInstance, type RouteOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ACCESS_COOKIE,
  type AccessLevel,
  installAccessControl,
  REFRESH_COOKIE,
  setScopeAccess,
} from "../../src/http/access-control.js";
import { TokenService } from "../../src/users/token-service.js";
import { signatureOf } from "../../src/webhooks/webhook-signature.js";
import { startGithubStub } from "../fixtures/github-stub.js";
import { startTelegramStub } from "../fixtures/telegram-stub.js";
import { createTestApp, TEST_API_KEY, TEST_JWT_SECRET, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, type Dialect, dialectAvailable } from "../helpers/test-database.js";

type Level = AccessLevel;

/**
 * The access level the specification gives each endpoint. The routes under test are not taken
 * from here but from the app itself (below): a route missing from this table, or declaring
 * another level, fails the first test.
 */
const SPECIFIED: Readonly<Record<string, Level>> = {
  "GET /": "public",
  "GET /health": "public",
  "GET /ready": "public",
  "GET /openapi.json": "public",
  // The docs page (Swagger UI), its assets and its copies of the document: public like the document.
  "GET /docs/": "public",
  "GET /docs/static/index.html": "public",
  "GET /docs/static/swagger-initializer.js": "public",
  "GET /docs/static/*": "public",
  "GET /docs/json": "public",
  "GET /docs/yaml": "public",
  "GET /metrics": "metrics",
  "GET /monitor/status": "public",
  // The dashboard's page and scripts, and whether it may offer the first registration.
  "GET /dashboard/": "public",
  "GET /dashboard/:file": "public",
  "GET /auth/registration": "public",
  "GET /files/*": "public",
  "POST /auth/register": "public",
  "POST /auth/login": "public",
  "POST /auth/refresh": "public",
  "POST /auth/logout": "public",
  "POST /webhook/codehost": "public",
  "GET /auth/check": "session",
  "GET /auth/profile": "session",
  "GET /monitor/repositories": "user",
  "POST /monitor/check/:owner/:repo": "user",
  "POST /monitor/check-all": "user",
  "POST /monitor/reprocess/:owner/:repo": "user",
  "POST /monitor/reprocess/:owner/:repo/:tag": "user",
  "GET /monitor/dry-run/:owner/:repo": "user",
  "GET /monitor/dry-run": "user",
  "GET /monitor/history": "user",
  "GET /monitor/history/:owner/:repo": "user",
  "GET /monitor/notifications": "user",
  "GET /monitor/events": "user",
  "POST /monitor/repositories": "apiKey",
  "PATCH /monitor/repositories/:id": "apiKey",
  "DELETE /monitor/repositories/:id": "apiKey",
  "POST /monitor/webhooks/:owner/:repo": "apiKey",
  "GET /monitor/webhooks/:owner/:repo": "apiKey",
  "DELETE /monitor/webhooks/:owner/:repo/:webhook_id": "apiKey",
  "POST /monitor/notifications/cleanup": "apiKey",
  "DELETE /monitor/notifications/:id": "apiKey",
  "POST /monitor/telegram/test": "apiKey",
};

interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
  readonly access: Level;
}

/** `route` as the specification names it: a HEAD route answers like its GET. */
const specKey = ({ method, url }: RegisteredRoute) =>
  `${method === "HEAD" ? "GET" : method} ${url}`;

/** A request header naming each test request, to tell whether access control let it through. */
const PROBE_HEADER = "x-access-probe";

/**
 * Builds an app and lists every route it registered, with the level access control settled for
 * it; the probes of the requests that got past access control go to `passed`. Fastify announces
 * each new instance on the `fastify.initialization` diagnostics channel; the hooks added there
 * see every route, including those plugins register, and every request.
 */
async function withRouteInventory<T>(
  build: () => Promise<T & { app: FastifyInstance }>,
  passed = new Set<string>(),
) {
  const seen = new Map<unknown, RouteOptions[]>();
  const record = (message: unknown) => {
    const { fastify } = message as { fastify: FastifyInstance };
    const routes: RouteOptions[] = [];
    seen.set(fastify, routes);
    fastify.addHook("onRoute", (route) => void routes.push(route));
    // Runs after every onRequest hook (access control among them), before the body is read:
    // the requests it sees are those access control let through.
    fastify.addHook("preParsing", async (request) => {
      const probe = request.headers[PROBE_HEADER];
      if (typeof probe === "string") passed.add(probe);
    });
  };
  diagnostics.subscribe("fastify.initialization", record);
  let built: T & { app: FastifyInstance };
  try {
    built = await build();
  } finally {
    diagnostics.unsubscribe("fastify.initialization", record);
  }
  const options = seen.get(built.app);
  if (!options?.length) throw new Error("the app's routes were not seen");
  // Read once the app is ready: access control fills in the level after this hook saw the route.
  const routes = options.flatMap((route) =>
    [route.method].flat().map((method) => ({
      method,
      url: route.url,
      access: route.config?.access as Level,
    })),
  );
  return { ...built, routes };
}

const user = { email: "ops@example.com", password: "a long password", name: "Ops" };
const WEBHOOK_SECRET = "access-levels-webhook-secret";
const BOT_TOKEN = "111:access-levels-bot-token";

/** The app under test, configured so that every allowed call can be served (no 503). */
async function accessApp(dialect: Dialect) {
  const stub = await startGithubStub();
  const telegram = await startTelegramStub(BOT_TOKEN);
  const t = await createTestApp(dialect, {
    stub,
    env: {
      PUBLIC_URL: "http://delivery.test",
      HOSTING_WEBHOOK_SECRET: WEBHOOK_SECRET,
      TELEGRAM_BOT_TOKEN: BOT_TOKEN,
      TELEGRAM_CHAT_ID: "-100",
      TELEGRAM_API_URL: telegram.url,
    },
  });
  return {
    t,
    app: t.app,
    async close() {
      await t.close();
      await stub.close();
      await telegram.close();
    },
  };
}

// The routes, read from an app built the way every test builds it.
const inventory = await withRouteInventory(() => accessApp("sqlite"));
const ROUTES: readonly RegisteredRoute[] = inventory.routes;
await inventory.close();

type Credential =
  | "none"
  | "wrong api key"
  | "api key"
  | "jwt cookie"
  | "jwt bearer"
  | "tampered jwt";

/** What access control answers each credential at each level: a refusal, or "allowed". */
const EXPECTED: Record<Level, Record<Credential, 401 | 403 | "allowed">> = {
  public: {
    none: "allowed",
    "wrong api key": "allowed",
    "api key": "allowed",
    "jwt cookie": "allowed",
    "jwt bearer": "allowed",
    "tampered jwt": "allowed",
  },
  user: {
    none: 401,
    "wrong api key": 401,
    "api key": "allowed",
    "jwt cookie": "allowed",
    "jwt bearer": "allowed",
    "tampered jwt": 401,
  },
  apiKey: {
    none: 401,
    "wrong api key": 401,
    "api key": "allowed",
    "jwt cookie": 403,
    "jwt bearer": 403,
    "tampered jwt": 401,
  },
  session: {
    none: 401,
    "wrong api key": 401,
    "api key": 401,
    "jwt cookie": "allowed",
    "jwt bearer": "allowed",
    "tampered jwt": 401,
  },
  // The API key only (also as a Bearer token, see metrics.test.ts); a user's JWT is no API key.
  metrics: {
    none: 401,
    "wrong api key": 401,
    "api key": "allowed",
    "jwt cookie": 401,
    "jwt bearer": 401,
    "tampered jwt": 401,
  },
};

/**
 * Public routes whose handler authenticates by itself: registration after the first user needs
 * the API key (the handler answers 401 to anyone else, access control having let them through).
 */
const HANDLER_REFUSES: Readonly<Record<string, Partial<Record<Credential, 401>>>> = {
  "POST /auth/register": {
    none: 401,
    "wrong api key": 401,
    "jwt cookie": 401,
    "jwt bearer": 401,
    "tampered jwt": 401,
  },
};

/** A request to `route` that its handler can serve (path parameters filled, a valid body). */
function sampleRequest(route: RegisteredRoute, session: { refreshToken: string }) {
  const url = route.url
    .replace(":owner", "acme")
    .replace(":repo", "missing")
    .replace(":tag", "v0.0.0")
    .replace(/:\w+/g, "999")
    .replace("*", "public/missing.bin");
  const cookies: Record<string, string> = {};
  const headers: Record<string, string> = {};
  let payload: string | object | undefined;
  switch (specKey(route)) {
    case "POST /auth/register":
      payload = {
        email: `new-${randomUUID()}@example.com`,
        password: "a long password",
        name: "N",
      };
      break;
    case "POST /auth/login":
      payload = { email: user.email, password: user.password };
      break;
    case "POST /auth/refresh":
      cookies[REFRESH_COOKIE] = session.refreshToken;
      break;
    case "POST /webhook/codehost":
      payload = JSON.stringify({ zen: "Keep it logically awesome." });
      headers["content-type"] = "application/json";
      headers["x-github-event"] = "ping";
      headers["x-github-delivery"] = randomUUID();
      headers["x-hub-signature-256"] = signatureOf(WEBHOOK_SECRET, Buffer.from(payload));
      break;
    case "POST /monitor/repositories":
      payload = { repository: "acme/missing" };
      break;
    case "PATCH /monitor/repositories/:id":
      payload = { active: false };
      break;
    case "POST /monitor/notifications/cleanup":
      payload = { older_than_days: 30 };
      break;
  }
  return { url, cookies, headers, payload };
}

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`access levels (${dialect})`, () => {
    let app: Awaited<ReturnType<typeof accessApp>>;
    let jwt: string;
    let refreshToken: string;
    /** Probes of the requests access control let through. */
    const passed = new Set<string>();

    beforeAll(async () => {
      app = await withRouteInventory(() => accessApp(dialect), passed);
      await app.app.inject({ method: "POST", url: "/auth/register", payload: user });
      const login = await app.app.inject({ method: "POST", url: "/auth/login", payload: user });
      jwt = login.json().token;
      refreshToken = login.cookies.find((c) => c.name === REFRESH_COOKIE)?.value ?? "";
    });
    afterAll(() => app.close());

    /** Calls `route` with `credential`; says whether access control let the call through. */
    async function call(route: RegisteredRoute, credential: Credential) {
      const sample = sampleRequest(route, { refreshToken });
      const probe = randomUUID();
      const headers: Record<string, string> = { ...sample.headers, [PROBE_HEADER]: probe };
      const cookies = { ...sample.cookies };
      if (credential === "api key") headers["x-api-key"] = TEST_API_KEY;
      if (credential === "wrong api key") headers["x-api-key"] = "not-the-key";
      if (credential === "jwt cookie") cookies[ACCESS_COOKIE] = jwt;
      if (credential === "jwt bearer") headers.authorization = `Bearer ${jwt}`;
      if (credential === "tampered jwt") cookies[ACCESS_COOKIE] = `${jwt.slice(0, -4)}AAAA`;
      const response = await app.app.inject({
        method: route.method as "GET",
        url: sample.url,
        headers,
        cookies,
        ...(sample.payload === undefined ? {} : { payload: sample.payload }),
      });
      return { response, passed: passed.has(probe) };
    }

    for (const route of ROUTES) {
      it(`${route.method} ${route.url} (${route.access}) answers each credential as its level says`, async () => {
        for (const [credential, expected] of Object.entries(EXPECTED[route.access]) as Array<
          [Credential, 401 | 403 | "allowed"]
        >) {
          const { response, passed: letThrough } = await call(route, credential);
          const label = `${route.method} ${route.url} with ${credential}: ${response.statusCode} ${response.body}`;
          if (expected === "allowed") {
            expect(letThrough, label).toBe(true);
            expect(response.statusCode, label).toBeLessThan(500);
            const handlerRefusal = HANDLER_REFUSES[specKey(route)]?.[credential];
            if (handlerRefusal) expect(response.statusCode, label).toBe(handlerRefusal);
            else expect([401, 403], label).not.toContain(response.statusCode);
          } else {
            expect(letThrough, label).toBe(false);
            expect(response.statusCode, label).toBe(expected);
            if (route.method !== "HEAD") {
              expect(response.json(), label).toEqual({
                error: expected === 403 ? "API key required" : "Unauthorized",
              });
            }
          }
        }
      });
    }

    it("refuses an unauthenticated write before reading its body", async () => {
      const response = await app.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers: { "content-type": "application/json" },
        payload: "{not json",
      });
      expect(response.statusCode).toBe(401);
    });
  });
}

describe("the route inventory", () => {
  it("has every registered route, and only those, at the level the specification gives it", () => {
    const registered = Object.fromEntries(
      ROUTES.filter((route) => route.method !== "HEAD").map((route) => [
        specKey(route),
        route.access,
      ]),
    );
    expect(registered).toEqual(SPECIFIED);
    for (const head of ROUTES.filter((route) => route.method === "HEAD")) {
      // NOTE: Fastify announces Swagger UI's page as `GET /docs/`, its HEAD twin as `HEAD /docs`.
      const level = SPECIFIED[specKey(head)] ?? SPECIFIED[`${specKey(head)}/`];
      expect(head.access, `HEAD ${head.url}`).toBe(level);
    }
  });
});

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
