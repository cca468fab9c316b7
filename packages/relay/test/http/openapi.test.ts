import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestRelay } from "../helpers/relay-harness.js";

type Document = { openapi: string; paths: Record<string, Record<string, unknown>> };

/** `METHOD /path` of every operation in the document. */
function documented(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/**
 * `METHOD /path` of every route the router holds, read from Fastify's route tree
 * (`├── /clients (POST, GET, HEAD)`, a child's segment added to its parent's), with `:param`
 * written `{param}` and the HEAD twins of GET routes left out, as the document leaves them.
 * The docs page's own assets and copies of the document (`/docs/…`, served by Swagger UI) are
 * left out too: the document shows the page, `GET /docs`.
 */
function registered(tree: string): string[] {
  const prefixes: string[] = [];
  return tree.split("\n").flatMap((line) => {
    const node = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!node) return [];
    const [, indent = "", segment = "", methods] = node;
    const depth = indent.length / 4;
    const path = (prefixes[depth - 1] ?? "") + segment;
    prefixes[depth] = path;
    return (methods ?? "")
      .split(", ")
      .filter((method) => method !== "" && method !== "HEAD" && !path.startsWith("/docs/"))
      .map((method) => `${method} ${path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
  });
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
    const routes = registered(relay.app.printRoutes({ commonPrefix: false }));
    expect(routes).toContain("POST /send-raw");
    expect(routes).toContain("GET /domains/{domain}/instructions");
    expect(routes).toEqual(expect.arrayContaining(["GET /metrics", "GET /ready", "GET /docs"]));
    expect(documented(document).sort()).toEqual(routes.sort());
  });
});
