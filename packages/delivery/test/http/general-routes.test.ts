import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VERSION } from "../../src/version.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`general endpoints (${dialect})`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp(dialect);
    });
    afterAll(() => t.close());

    it("GET / answers a welcome message with the version", async () => {
      const response = await t.app.inject({ method: "GET", url: "/" });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ message: expect.any(String), version: VERSION });
    });

    it("GET /health is ok while the database answers", async () => {
      const response = await t.app.inject({ method: "GET", url: "/health" });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: "ok" });
    });

    it("GET /openapi.json documents every endpoint with its security", async () => {
      const response = await t.app.inject({ method: "GET", url: "/openapi.json" });
      expect(response.statusCode).toBe(200);
      const doc = response.json();
      expect(doc.openapi).toMatch(/^3\./);
      expect(doc.info.version).toBe(VERSION);
      for (const path of [
        "/",
        "/health",
        "/openapi.json",
        "/auth/register",
        "/auth/login",
        "/auth/refresh",
        "/auth/check",
        "/auth/profile",
        "/auth/logout",
        "/monitor/repositories",
        "/monitor/repositories/{id}",
        "/monitor/status",
      ]) {
        expect(doc.paths, path).toHaveProperty([path]);
      }
      expect(doc.paths["/monitor/repositories"].post.security).toEqual([{ apiKey: [] }]);
      expect(doc.paths["/monitor/status"].get.security).toEqual([]);
    });

    it("answers unknown paths with 404 {error}", async () => {
      const response = await t.app.inject({ method: "GET", url: "/nope" });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: "Not Found" });
    });

    it("logs each request as JSON under delivery::http", async () => {
      await t.app.inject({ method: "GET", url: "/health?x=1" });
      const line = t.logs.forTarget("delivery::http").at(-1);
      expect(line?.fields).toMatchObject({
        message: "request",
        method: "GET",
        path: "/health",
        status: 200,
      });
    });

    it("GET /health is 503 degraded once the database is down", async () => {
      const other = await createTestApp(dialect);
      try {
        await other.database.close();
        const response = await other.app.inject({ method: "GET", url: "/health" });
        expect(response.statusCode).toBe(503);
        expect(response.json()).toEqual({ status: "degraded", services: { database: false } });
      } finally {
        await other.close();
      }
    });
  });
}
