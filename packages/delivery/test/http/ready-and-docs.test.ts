import { join } from "node:path";
import { createLogging } from "@rd/common";
import { LogCapture, makeTempDir } from "@rd/common/test-kit";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { migrateToLatest, openDatabase } from "../../src/db/database.js";
import { startService } from "../../src/main.js";
import { WatchedRepositoryStore } from "../../src/repositories/watched-repository-store.js";
import { startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

/** The `src`/`href` addresses a page references (scripts, styles, icons). */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
}

describe("GET /ready", () => {
  let t: TestApp;
  afterEach(() => t.close());

  it("is 200 while the database answers and the storage is writable", async () => {
    t = await createTestApp("sqlite");
    const response = await t.app.inject({ method: "GET", url: "/ready" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      status: "ready",
      checks: { database: true, storage: true, accepting: true },
    });
  });

  it("is 503 naming the database when it is down", async () => {
    t = await createTestApp("sqlite");
    await t.database.close();
    const response = await t.app.inject({ method: "GET", url: "/ready" });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      status: "not_ready",
      checks: { database: false, storage: true, accepting: true },
    });
  });

  it("is 503 naming the storage when the object store does not answer", async () => {
    t = await createTestApp("sqlite", { objectstore: { isHealthy: async () => false } });
    const response = await t.app.inject({ method: "GET", url: "/ready" });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      status: "not_ready",
      checks: { database: true, storage: false, accepting: true },
    });
  });
});

describe("GET /ready while shutting down", () => {
  it("is 503 from the moment shutdown begins, while a scheduler round still finishes", async () => {
    const stub = await startGithubStub();
    const dir = await makeTempDir("rd-delivery-ready-");
    try {
      const config = loadConfig({
        HOST: "127.0.0.1",
        PORT: "0",
        DATABASE_URL: `sqlite:${join(dir.path, "delivery.db")}`,
        LOCAL_STORAGE_DIR: join(dir.path, "files"),
        JWT_SECRET: "ready-test-jwt-secret-0123456789abcdef",
        CODEHOST_API_URL: stub.url,
        SCHEDULER_INTERVAL_MINUTES: "10",
      });
      // A watched repository, and a code host that answers only when told: the first round
      // (at start) is still checking it when shutdown begins.
      const database = openDatabase(config.database);
      await migrateToLatest(database);
      await new WatchedRepositoryStore(database.db).add("acme", "slow", new Date().toISOString());
      await database.close();
      stub.addRepository("acme/slow");
      let answer: () => void = () => undefined;
      stub.state.hold = new Promise((resolve) => {
        answer = resolve;
      });
      const service = await startService(config, {
        logging: createLogging({ destination: new LogCapture() }),
      });
      expect((await fetch(`${service.address}/ready`)).status).toBe(200);
      await expect.poll(() => stub.state.requests.length).toBeGreaterThan(0);

      const stopped = service.stop();
      const ready = await fetch(`${service.address}/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({
        status: "not_ready",
        checks: { database: true, storage: true, accepting: false },
      });
      // Liveness is another question: the process is alive and finishing its work.
      expect((await fetch(`${service.address}/health`)).status).toBe(200);
      answer();
      await stopped;
    } finally {
      await stub.close();
      await dir.remove();
    }
  });
});

describe("GET /docs", () => {
  it("serves Swagger UI and every asset it references from the service itself, publicly", async () => {
    const stub = await startGithubStub();
    const dir = await makeTempDir("rd-delivery-docs-");
    try {
      const config = loadConfig({
        HOST: "127.0.0.1",
        PORT: "0",
        DATABASE_URL: `sqlite:${join(dir.path, "delivery.db")}`,
        LOCAL_STORAGE_DIR: join(dir.path, "files"),
        JWT_SECRET: "docs-test-jwt-secret-0123456789abcdef",
        API_KEY: "docs-test-api-key",
        CODEHOST_API_URL: stub.url,
        SCHEDULER_INTERVAL_MINUTES: "0",
      });
      const service = await startService(config, {
        logging: createLogging({ destination: new LogCapture() }),
      });
      try {
        const page = await fetch(`${service.address}/docs`);
        expect(page.status).toBe(200);
        expect(page.headers.get("content-type")).toMatch(/^text\/html/);
        expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
        const assets = assetsOf(await page.text());
        expect(assets.length).toBeGreaterThanOrEqual(5);
        for (const asset of assets) {
          // No CDN: every reference is the service's own.
          expect(asset).not.toMatch(/^(https?:)?\/\//);
          const url = new URL(asset, `${service.address}/docs`);
          const response = await fetch(url);
          expect(response.status, url.pathname).toBe(200);
          expect((await response.arrayBuffer()).byteLength, url.pathname).toBeGreaterThan(0);
        }
        const document = await fetch(`${service.address}/docs/json`);
        expect(document.status).toBe(200);
        expect(((await document.json()) as { paths: object }).paths).toHaveProperty("/metrics");
      } finally {
        await service.stop();
      }
    } finally {
      await stub.close();
      await dir.remove();
    }
  });
});
