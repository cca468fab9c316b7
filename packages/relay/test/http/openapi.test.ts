import { documentedOperations, type OpenApiPaths, registeredOperations } from "@rd/common/test-kit";
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestRelay } from "../helpers/relay-harness.js";

type Document = OpenApiPaths & { openapi: string };

/**
 * The routes the document must show: every route of the router but the HEAD twins of GET
 * routes (the document leaves them out), and the docs page's own assets and copies of the
 * document (`/docs/…`, served by Swagger UI): the document shows the page, `GET /docs`.
 */
function servedOperations(relay: TestRelay): string[] {
  return registeredOperations(relay.app.printRoutes({ commonPrefix: false })).filter(
    (operation) => !operation.startsWith("HEAD ") && !operation.includes(" /docs/"),
  );
}

describe("GET /openapi.json", () => {
  let relay: TestRelay;
  let document: Document;
  beforeAll(async () => {
    relay = await TestRelay.start();
    const response = await relay.app.inject({ method: "GET", url: "/openapi.json" });
    expect(response.statusCode).toBe(200);
    document = response.json();
  });
  afterAll(() => relay.close());

  it("is a valid OpenAPI 3.0 document", async () => {
    expect(document.openapi).toMatch(/^3\.0\./);
    // `validate` dereferences what it is given: hand it a copy.
    const result = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
  });

  it("documents every route the app serves, and nothing else", () => {
    const routes = servedOperations(relay);
    expect(routes).toContain("POST /send-raw");
    expect(routes).toContain("GET /domains/{domain}/instructions");
    expect(routes).toEqual(expect.arrayContaining(["GET /metrics", "GET /ready", "GET /docs"]));
    expect(documentedOperations(document).sort()).toEqual(routes.sort());
  });
});
