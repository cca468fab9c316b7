import { rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { TestRelay } from "../helpers/relay-harness.js";

/** The `src`/`href` addresses a page references (scripts, styles, icons). */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
}

describe("GET /ready", () => {
  let relay: TestRelay;
  afterEach(() => relay.close());

  it("is 200 while the state database answers and its folder is writable", async () => {
    relay = await TestRelay.start();
    const response = await relay.app.inject({ method: "GET", url: "/ready" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      status: "ready",
      checks: { database: true, storage: true, accepting: true },
    });
  });

  it("is 503 naming the storage when the state folder (RELAY_DB, with the spool) is gone", async () => {
    relay = await TestRelay.start();
    // The open database still answers from its removed file: only the storage fails.
    await rm(relay.env.dbDir, { recursive: true });
    const response = await relay.app.inject({ method: "GET", url: "/ready" });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      status: "not_ready",
      checks: { database: true, storage: false, accepting: true },
    });
  });

  it("is 503 naming the database when it no longer answers", async () => {
    relay = await TestRelay.start();
    relay.relay.db.close();
    const response = await relay.app.inject({ method: "GET", url: "/ready" });
    expect(response.statusCode).toBe(503);
    expect(response.json().checks).toEqual({ database: false, storage: true, accepting: true });
  });
});

describe("GET /docs", () => {
  let relay: TestRelay;
  afterEach(() => relay.close());

  it("serves Swagger UI and every asset it references from the relay itself, without credentials", async () => {
    relay = await TestRelay.start();
    const base = `http://${await relay.relay.listen()}`;
    const page = await fetch(`${base}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    const html = await page.text();
    const assets = assetsOf(html);
    expect(assets.length).toBeGreaterThanOrEqual(5);
    for (const asset of assets) {
      // No CDN: every reference is the relay's own.
      expect(asset).not.toMatch(/^(https?:)?\/\//);
      const url = new URL(asset, `${base}/docs`);
      const response = await fetch(url);
      expect(response.status, url.pathname).toBe(200);
      expect((await response.arrayBuffer()).byteLength, url.pathname).toBeGreaterThan(0);
    }
    // The initializer points Swagger UI at the document, served beside the page.
    const initializer = await (await fetch(`${base}/docs/static/swagger-initializer.js`)).text();
    expect(initializer).toContain("resolveUrl('./json')");
    const document = await fetch(`${base}/docs/json`);
    expect(document.status).toBe(200);
    expect(((await document.json()) as { paths: object }).paths).toHaveProperty("/send");
  });
});
