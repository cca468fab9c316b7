import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheControlPolicy } from "../../src/http/routes/files-routes.js";
import { startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { createProcessingHarness, type ProcessingHarness } from "../releases/processing-harness.js";
import { createReleaseStub } from "../releases/release-stub.js";

const IMMUTABLE = "public, max-age=31536000, immutable";

const DECLARATION = (provider: string, bucket: string) => `
storage: {provider: ${provider}, bucket: ${bucket}, folder_name: cached}
artifacts:
  - {source: tool.tar.gz, destination: "tool-{version}.tar.gz"}
  - {source: tool.AppImage, destination: tool.AppImage}
docs:
  - {source: notes.md, destination: notes.md}
`;

const ASSETS = [
  { name: "tool.tar.gz", content: "gz bytes" },
  { name: "tool.AppImage", content: "appimage bytes" },
];

describe("cache headers and content types of published files", () => {
  describe("on the object store (S3 metadata)", () => {
    let h: ProcessingHarness;
    beforeAll(async () => {
      h = await createProcessingHarness();
    });
    afterAll(() => h.close());

    it("stores versioned objects immutable, latest/ for LATEST_MAX_AGE_SECONDS, each typed by its name", async () => {
      const repository = await h.addRepository("acme/cached");
      h.releases.addRelease("acme/cached", {
        tag: "v3.1.0",
        assets: ASSETS,
        files: { ".delivery.yml": DECLARATION("objectstore", "downloads"), "notes.md": "# n" },
      });
      const processing = await h
        .processor({ policy: { latestMaxAgeSeconds: 120 } })
        .check(repository, "manual");
      expect(processing.result.errors).toEqual([]);
      const expected: Array<[string, string, string]> = [
        ["cached/3.1.0/tool-3.1.0.tar.gz", IMMUTABLE, "application/gzip"],
        ["cached/3.1.0/tool.AppImage", IMMUTABLE, "application/vnd.appimage"],
        ["cached/3.1.0/notes.md", IMMUTABLE, "text/markdown; charset=utf-8"],
        ["cached/3.1.0/SHA256SUMS", IMMUTABLE, "text/plain; charset=utf-8"],
        ["cached/3.1.0/manifest.json", IMMUTABLE, "application/json; charset=utf-8"],
        ["cached/latest/tool-latest.tar.gz", "public, max-age=120", "application/gzip"],
        ["cached/latest/SHA256SUMS", "public, max-age=120", "text/plain; charset=utf-8"],
        ["cached/latest/manifest.json", "public, max-age=120", "application/json; charset=utf-8"],
      ];
      for (const [key, cacheControl, contentType] of expected) {
        const answer = await fetch(`${h.s3.endpoint}/downloads/${key}`);
        await answer.arrayBuffer();
        expect(answer.status, key).toBe(200);
        expect(answer.headers.get("cache-control"), key).toBe(cacheControl);
        expect(answer.headers.get("content-type"), key).toBe(contentType);
      }
    });
  });

  describe("on local storage (GET /files)", () => {
    let t: TestApp;
    beforeAll(async () => {
      const releases = createReleaseStub();
      const stub = await startGithubStub({ routes: [releases.routes] });
      t = await createTestApp("sqlite", { stub, env: { LATEST_MAX_AGE_SECONDS: "60" } });
      stub.addRepository("acme/cached");
      releases.addRelease("acme/cached", {
        tag: "v3.1.0",
        assets: ASSETS,
        files: { ".delivery.yml": DECLARATION("local", "public"), "notes.md": "# n" },
      });
      const headers = { "x-api-key": TEST_API_KEY };
      await t.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers,
        payload: { repository: "acme/cached" },
      });
      const check = await t.app.inject({
        method: "POST",
        url: "/monitor/check/acme/cached",
        headers,
      });
      expect(check.json().errors).toEqual([]);
    });
    afterAll(async () => {
      await t.close();
      await t.stub.close();
    });

    it.each([
      ["cached/3.1.0/tool-3.1.0.tar.gz", IMMUTABLE, "application/gzip"],
      ["cached/3.1.0/tool.AppImage", IMMUTABLE, "application/vnd.appimage"],
      ["cached/3.1.0/SHA256SUMS", IMMUTABLE, "text/plain; charset=utf-8"],
      ["cached/3.1.0/manifest.json", IMMUTABLE, "application/json; charset=utf-8"],
      ["cached/latest/notes.md", "public, max-age=60", "text/markdown; charset=utf-8"],
      ["cached/latest/SHA256SUMS", "public, max-age=60", "text/plain; charset=utf-8"],
    ])("serves %s with %s and %s", async (key, cacheControl, contentType) => {
      const reply = await t.app.inject({ method: "GET", url: `/files/public/${key}` });
      expect(reply.statusCode).toBe(200);
      expect(reply.headers["cache-control"]).toBe(cacheControl);
      expect(reply.headers["content-type"]).toBe(contentType);
      const again = await t.app.inject({
        method: "GET",
        url: `/files/public/${key}`,
        headers: { "if-none-match": String(reply.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
      expect(again.headers["cache-control"]).toBe(cacheControl);
    });

    it("sends no cache policy with a 404", async () => {
      const reply = await t.app.inject({ method: "GET", url: "/files/public/cached/3.1.0/none" });
      expect(reply.statusCode).toBe(404);
      expect(reply.headers["cache-control"]).toBeUndefined();
    });
  });

  describe("the /files policy", () => {
    let dir: { path: string; remove(): Promise<void> };
    beforeAll(async () => {
      dir = await makeTempDir("rd-cache-policy-");
      const manifest = (channel: string | null) => JSON.stringify({ tag: "v1", channel });
      for (const [folder, content] of [
        ["app/1.0.0", manifest(null)],
        ["app/next", manifest("next")],
        ["app/broken", "{not json"],
      ] as const) {
        await mkdir(join(dir.path, "site", folder), { recursive: true });
        await writeFile(join(dir.path, "site", folder, "manifest.json"), content);
      }
    });
    afterAll(() => dir.remove());

    it.each([
      ["app/1.0.0/a.bin", IMMUTABLE],
      ["app/1.0.0/deep/er/a.bin", IMMUTABLE],
      ["app/2.0.0/no-manifest.bin", IMMUTABLE],
      ["app/broken/a.bin", IMMUTABLE],
      ["app/latest/a.bin", "public, max-age=300"],
      ["app/next/a.bin", "public, max-age=300"],
      ["app/next/manifest.json", "public, max-age=300"],
      ["app/a.bin", "public, max-age=300"],
    ])("gives %s the policy %s (a channel is named by its manifest)", async (key, expected) => {
      expect(await cacheControlPolicy(dir.path, 300)("site", key)).toBe(expected);
    });
  });
});
