import { join } from "node:path";
import { createLogging } from "@rd/common";
import { LogCapture, makeTempDir, sampleValue } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { type RunningService, startService } from "../../src/main.js";
import { type GithubStub, startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { createReleaseStub } from "../releases/release-stub.js";

const API_KEY = "metrics-test-api-key";
const DECLARATION = `
storage: {provider: local, bucket: public}
artifacts:
  - {source: tool.bin, destination: 'tool-{version}.bin'}
docs:
  - {source: README.md, destination: README.md}
`;

describe("GET /metrics after a release published through the code host", () => {
  let stub: GithubStub;
  let dir: { path: string; remove(): Promise<void> };
  let service: RunningService;
  let text: string;
  let totalBytes: number;

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${service.address}${path}`, {
      ...init,
      headers: {
        "x-api-key": API_KEY,
        ...(init.body !== undefined && { "content-type": "application/json" }),
      },
    });

  beforeAll(async () => {
    const releases = createReleaseStub();
    stub = await startGithubStub({ routes: [releases.routes] });
    dir = await makeTempDir("rd-delivery-metrics-");
    const config = loadConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      DATABASE_URL: `sqlite:${join(dir.path, "delivery.db")}`,
      LOCAL_STORAGE_DIR: join(dir.path, "files"),
      API_KEY,
      JWT_SECRET: "metrics-test-jwt-secret-0123456789abcdef",
      CODEHOST_API_URL: stub.url,
      // The scheduler's first round runs at start (there is nothing to check yet).
      SCHEDULER_INTERVAL_MINUTES: "10",
    });
    service = await startService(config, {
      logging: createLogging({ destination: new LogCapture() }),
    });

    stub.addRepository("acme/tool");
    releases.addRelease("acme/tool", {
      tag: "v1.0.0",
      assets: [{ name: "tool.bin", content: "v1.0.0 bytes" }],
      files: { ".delivery.yml": DECLARATION, "README.md": "# v1.0.0" },
    });
    const registered = await call("/monitor/repositories", {
      method: "POST",
      body: JSON.stringify({ repository: "acme/tool" }),
    });
    expect(registered.status).toBe(201);
    const checked = await call("/monitor/check/acme/tool", { method: "POST" });
    expect(checked.status).toBe(200);
    const history = (await (await call("/monitor/history")).json()) as {
      history: Array<{ status: string; total_bytes: number }>;
    };
    expect(history.history).toMatchObject([{ status: "success" }]);
    totalBytes = history.history[0]?.total_bytes ?? 0;

    // Prometheus sends its credential as a Bearer token. The scheduler's first round (started
    // with the service) may still be finishing: scrape until it is counted.
    for (let scrapes = 0; scrapes < 200; scrapes++) {
      const response = await fetch(`${service.address}/metrics`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      text = await response.text();
      if (sampleValue(text, "delivery_scheduler_rounds_total", { outcome: "ran" }) === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  });
  afterAll(async () => {
    await service.stop();
    await stub.close();
    await dir.remove();
  });

  const value = (name: string, labels?: Record<string, string>) => sampleValue(text, name, labels);

  it("counts the release processed, its bytes by provider and its duration", () => {
    expect(totalBytes).toBeGreaterThan(0);
    expect(value("delivery_releases_processed_total", { status: "success" })).toBe(1);
    expect(value("delivery_releases_processed_total", { status: "failed" })).toBe(0);
    expect(value("delivery_published_bytes_total", { provider: "local" })).toBe(totalBytes);
    expect(value("delivery_publish_duration_seconds_count")).toBe(1);
    expect(value("delivery_publish_duration_seconds_sum")).toBeGreaterThan(0);
  });

  it("reads the code host's remaining rate limit", () => {
    expect(value("delivery_codehost_rate_limit_remaining", { resource: "core" })).toBe(
      stub.state.rateLimit.remaining,
    );
  });

  it("counts the scheduler's rounds and the HTTP answers by route pattern", () => {
    expect(value("delivery_scheduler_rounds_total", { outcome: "ran" })).toBe(1);
    expect(
      value("delivery_http_requests_total", {
        route: "/monitor/check/:owner/:repo",
        status: "200",
      }),
    ).toBe(1);
    expect(
      value("delivery_http_requests_total", { route: "/monitor/repositories", status: "201" }),
    ).toBe(1);
  });

  it("includes the default process metrics", () => {
    expect(value("process_resident_memory_bytes")).toBeGreaterThan(0);
  });
});

describe("access to GET /metrics", () => {
  let t: TestApp;
  afterAll(() => t.close());

  const scrape = (headers: Record<string, string> = {}) =>
    t.app.inject({ method: "GET", url: "/metrics", headers });

  it("takes the API key as X-API-Key or Authorization: Bearer, and nothing else", async () => {
    t = await createTestApp("sqlite");
    expect((await scrape()).statusCode).toBe(401);
    expect((await scrape({ "x-api-key": "wrong" })).statusCode).toBe(401);
    expect((await scrape({ authorization: "Bearer wrong" })).statusCode).toBe(401);
    expect((await scrape({ "x-api-key": TEST_API_KEY })).statusCode).toBe(200);
    expect((await scrape({ authorization: `Bearer ${TEST_API_KEY}` })).statusCode).toBe(200);
    // A logged-in user's token is no API key.
    await t.app.inject({
      method: "POST",
      url: "/auth/register",
      payload: { email: "ops@example.com", password: "ops password", name: "Ops" },
    });
    const login = await t.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { email: "ops@example.com", password: "ops password" },
    });
    const { token } = login.json() as { token: string };
    expect((await scrape({ authorization: `Bearer ${token}` })).statusCode).toBe(401);
    await t.close();

    // Open only where no API key is configured.
    t = await createTestApp("sqlite", { env: { API_KEY: undefined } });
    expect((await scrape()).statusCode).toBe(200);
  });

  it("leaves the rate-limit sample out while the code host cannot say it", async () => {
    await t.close();
    // Nothing listens on port 1: the limit stays unknown.
    t = await createTestApp("sqlite", { env: { CODEHOST_API_URL: "http://127.0.0.1:1" } });
    const text = (await scrape({ "x-api-key": TEST_API_KEY })).body;
    expect(text).toContain("# TYPE delivery_codehost_rate_limit_remaining gauge");
    expect(text).not.toMatch(/^delivery_codehost_rate_limit_remaining/m);
    expect(text).not.toContain("NaN");
  });
});
