import { documentedOperations, type OpenApiPaths, registeredOperations } from "@rd/common/test-kit";
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

type Document = OpenApiPaths & { openapi: string };

/**
 * The router's routes as the document writes them: `@fastify/static`'s `/files/*` is
 * `/files/{bucket}/{key}`, and the HEAD twins of GET routes are left out (only `/files`, which
 * is read with HEAD for its headers, documents its HEAD). The docs page's own assets and copies
 * of the document (`/docs/…`, served by Swagger UI) are left out: the document shows `GET /docs`.
 */
function servedOperations(t: TestApp): string[] {
  // NOTE: the route tree prints the wildcard of `/files/*` as a bare `/*` child of the root.
  expect(t.app.hasRoute({ method: "GET", url: "/files/*" })).toBe(true);
  expect(t.app.hasRoute({ method: "GET", url: "/*" })).toBe(false);
  return registeredOperations(t.app.printRoutes({ commonPrefix: false }))
    .map((operation) => operation.replace(/ \/(files\/)?\*$/, " /files/{bucket}/{key}"))
    .filter(
      (operation) =>
        !operation.includes(" /docs/") &&
        (!operation.startsWith("HEAD ") || operation === "HEAD /files/{bucket}/{key}"),
    );
}

describe("GET /openapi.json", () => {
  let t: TestApp;
  let document: Document;
  beforeAll(async () => {
    t = await createTestApp("sqlite");
    const response = await t.app.inject({ method: "GET", url: "/openapi.json" });
    expect(response.statusCode).toBe(200);
    document = response.json();
  });
  afterAll(() => t.close());

  it("is a valid OpenAPI 3.0 document", async () => {
    expect(document.openapi).toMatch(/^3\.0\./);
    // `validate` dereferences what it is given: hand it a copy.
    const result = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
  });

  it("documents every route the app serves, and nothing else", () => {
    const routes = servedOperations(t);
    expect(routes).toEqual(
      expect.arrayContaining([
        "GET /files/{bucket}/{key}",
        "HEAD /files/{bucket}/{key}",
        "GET /metrics",
        "GET /ready",
        "GET /docs",
        "POST /webhook/codehost",
      ]),
    );
    expect(documentedOperations(document).sort()).toEqual(routes.sort());
  });

  it("documents /files as public, with its two path parameters", () => {
    const files = document.paths["/files/{bucket}/{key}"] as Record<string, { security: unknown }>;
    expect(Object.keys(files).sort()).toEqual(["get", "head"]);
    expect(files.get?.security).toEqual([]);
    expect(files.get).toMatchObject({
      parameters: [
        { name: "bucket", in: "path", required: true },
        { name: "key", in: "path", required: true },
      ],
    });
  });
});
