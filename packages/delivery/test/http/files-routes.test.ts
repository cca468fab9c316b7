import { mkdir, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import { makeTempDir } from "@rd/common/test-kit";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filesRoutes, isActiveContent } from "../../src/http/routes/files-routes.js";
import { LocalObjectStore } from "../../src/storage/local-store.js";

const CONTENT = "0123456789abcdefghij";

describe("GET /files/<bucket>/<key>", () => {
  let dir: { path: string; remove(): Promise<void> };
  let app: FastifyInstance;

  beforeAll(async () => {
    dir = await makeTempDir();
    const root = join(dir.path, "files");
    const store = new LocalObjectStore(root);
    await store.put("site", "app/1.0.0/app.txt", Readable.from([Buffer.from(CONTENT)]), {
      contentType: "text/plain",
    });
    await store.put("site", "docs/guide.html", Readable.from([Buffer.from("<h1>Guide</h1>")]), {
      contentType: "text/html",
    });
    await store.put("site", "app/1.0.0/app.zip", Readable.from([Buffer.from("PK")]), {
      contentType: "application/zip",
    });
    // Files that must never be served: beside the buckets, outside the root, in the temp folder.
    await writeFile(join(root, "root-secret.txt"), "ROOT-CONTENT-MUST-NOT-LEAK");
    await writeFile(join(dir.path, "outside-secret.txt"), "OUTSIDE-CONTENT-MUST-NOT-LEAK");
    await mkdir(join(root, ".incoming"), { recursive: true });
    await writeFile(join(root, ".incoming", "partial"), "PARTIAL-CONTENT-MUST-NOT-LEAK");
    app = Fastify();
    await app.register(filesRoutes, { root, inlineActiveContent: false, latestMaxAgeSeconds: 300 });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await dir.remove();
  });

  it("serves a stored file with its type, length, ETag and Last-Modified", async () => {
    const reply = await app.inject({ method: "GET", url: "/files/site/app/1.0.0/app.txt" });
    expect(reply.statusCode).toBe(200);
    expect(reply.body).toBe(CONTENT);
    expect(reply.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(reply.headers["content-length"]).toBe(String(CONTENT.length));
    expect(reply.headers.etag).toMatch(/^(W\/)?".+"$/);
    expect(new Date(String(reply.headers["last-modified"])).getTime()).not.toBeNaN();
    expect(reply.headers["accept-ranges"]).toBe("bytes");
  });

  it("types files by extension", async () => {
    const html = await app.inject({ method: "GET", url: "/files/site/docs/guide.html" });
    expect(html.headers["content-type"]).toBe("text/html; charset=utf-8");
    const zip = await app.inject({ method: "GET", url: "/files/site/app/1.0.0/app.zip" });
    expect(zip.headers["content-type"]).toBe("application/zip");
  });

  it("answers HEAD with the headers and no body", async () => {
    const reply = await app.inject({ method: "HEAD", url: "/files/site/app/1.0.0/app.txt" });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers["content-length"]).toBe(String(CONTENT.length));
    expect(reply.body).toBe("");
  });

  it("answers 304 to If-None-Match with the current ETag", async () => {
    const first = await app.inject({ method: "GET", url: "/files/site/app/1.0.0/app.txt" });
    const again = await app.inject({
      method: "GET",
      url: "/files/site/app/1.0.0/app.txt",
      headers: { "if-none-match": String(first.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe("");
  });

  it("answers 304 to If-Modified-Since not older than the file, 200 to an older date", async () => {
    const first = await app.inject({ method: "GET", url: "/files/site/app/1.0.0/app.txt" });
    const lastModified = String(first.headers["last-modified"]);
    const same = await app.inject({
      method: "GET",
      url: "/files/site/app/1.0.0/app.txt",
      headers: { "if-modified-since": lastModified },
    });
    expect(same.statusCode).toBe(304);
    const older = await app.inject({
      method: "GET",
      url: "/files/site/app/1.0.0/app.txt",
      headers: { "if-modified-since": new Date(0).toUTCString() },
    });
    expect(older.statusCode).toBe(200);
  });

  it("answers a range request with 206 and the requested bytes", async () => {
    const reply = await app.inject({
      method: "GET",
      url: "/files/site/app/1.0.0/app.txt",
      headers: { range: "bytes=5-9" },
    });
    expect(reply.statusCode).toBe(206);
    expect(reply.body).toBe("56789");
    expect(reply.headers["content-range"]).toBe(`bytes 5-9/${CONTENT.length}`);
    expect(reply.headers["content-length"]).toBe("5");
  });

  it("answers 416 to a range beyond the end of the file", async () => {
    const reply = await app.inject({
      method: "GET",
      url: "/files/site/app/1.0.0/app.txt",
      headers: { range: "bytes=500-600" },
    });
    expect(reply.statusCode).toBe(416);
    expect(reply.headers["content-range"]).toBe(`bytes */${CONTENT.length}`);
  });

  it("answers 404 for a missing file, a folder and a bucket root", async () => {
    for (const url of [
      "/files/site/app/9.9.9/app.txt",
      "/files/site/app",
      "/files/site/",
      "/files/nobucket/x",
    ]) {
      const reply = await app.inject({ method: "GET", url });
      expect(reply.statusCode, url).toBe(404);
    }
  });

  it.each([
    "/files/site/../root-secret.txt",
    "/files/site/%2e%2e/root-secret.txt",
    "/files/site/%2E%2E/%2E%2E/outside-secret.txt",
    "/files/site/..%2f..%2foutside-secret.txt",
    "/files/site/..%5c..%5coutside-secret.txt",
    "/files/site/..\\..\\outside-secret.txt",
    "/files/..%2froot-secret.txt",
    "/files/%2e%2e/outside-secret.txt",
    "/files/root-secret.txt",
    "/files/.incoming/partial",
    "/files/site/app/1.0.0/app.txt%00.html",
    "/files/site//app/1.0.0/app.txt",
  ])("refuses the escaping or malformed path %s with 404", async (url) => {
    const reply = await app.inject({ method: "GET", url });
    expect(reply.statusCode).toBe(404);
    expect(reply.body).not.toContain("MUST-NOT-LEAK");
    expect(reply.body).not.toContain("PARTIAL-CONTENT-MUST-NOT-LEAK");
  });

  describe("over a real socket", () => {
    let base: string;
    let port: number;

    beforeAll(async () => {
      await app.close();
      app = Fastify();
      await app.register(filesRoutes, {
        root: join(dir.path, "files"),
        inlineActiveContent: false,
        latestMaxAgeSeconds: 300,
      });
      await app.listen({ host: "127.0.0.1", port: 0 });
      port = (app.server.address() as AddressInfo).port;
      base = `http://127.0.0.1:${port}`;
    });

    it("serves whole files and ranges", async () => {
      const whole = await fetch(`${base}/files/site/app/1.0.0/app.txt`);
      expect(whole.status).toBe(200);
      expect(await whole.text()).toBe(CONTENT);
      const part = await fetch(`${base}/files/site/app/1.0.0/app.txt`, {
        headers: { range: "bytes=-4" },
      });
      expect(part.status).toBe(206);
      expect(await part.text()).toBe("ghij");
    });

    it("does not let a raw, unnormalised ../ path escape the root", async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          { host: "127.0.0.1", port, path: "/files/site/../../outside-secret.txt" },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end();
      });
      expect(status).toBe(404);
    });
  });
});

describe("/files keeps published content away from the service's origin", () => {
  const ACTIVE = [
    "html",
    "htm",
    "xhtml",
    "svg",
    "xml",
    "xsl",
    "xslt",
    "js",
    "mjs",
    "es",
    "rss",
    "atom",
    "mathml",
    "swf",
  ];
  const PASSIVE = [
    "txt",
    "png",
    "json",
    "css",
    "zip",
    "pdf",
    "md",
    "wasm",
    "tar.gz",
    "noextension",
  ];
  const fileName = (extension: string) =>
    extension === "noextension" ? "file" : `file.${extension}`;
  let dir: { path: string; remove(): Promise<void> };
  const apps: FastifyInstance[] = [];

  async function serve(inlineActiveContent: boolean): Promise<FastifyInstance> {
    const app = Fastify();
    apps.push(app);
    await app.register(filesRoutes, {
      root: join(dir.path, "files"),
      inlineActiveContent,
      latestMaxAgeSeconds: 300,
    });
    await app.ready();
    return app;
  }

  beforeAll(async () => {
    dir = await makeTempDir();
    const bucket = join(dir.path, "files", "site");
    await mkdir(bucket, { recursive: true });
    for (const extension of [...ACTIVE, ...PASSIVE]) {
      await writeFile(join(bucket, fileName(extension)), "<script>alert(document.cookie)</script>");
    }
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await dir.remove();
  });

  it.each(ACTIVE)("sends a .%s file sandboxed, unsniffed, as a download", async (extension) => {
    const app = await serve(false);
    for (const method of ["GET", "HEAD"] as const) {
      const reply = await app.inject({ method, url: `/files/site/${fileName(extension)}` });
      expect(reply.statusCode).toBe(200);
      expect(isActiveContent(String(reply.headers["content-type"]))).toBe(true);
      expect(reply.headers).toMatchObject({
        "content-security-policy": "sandbox",
        "x-content-type-options": "nosniff",
        "content-disposition": "attachment",
      });
    }
  });

  it.each(PASSIVE)("sends a .%s file sandboxed and unsniffed, inline", async (extension) => {
    const app = await serve(false);
    const reply = await app.inject({ method: "GET", url: `/files/site/${fileName(extension)}` });
    expect(reply.statusCode).toBe(200);
    expect(isActiveContent(String(reply.headers["content-type"]))).toBe(false);
    expect(reply.headers).toMatchObject({
      "content-security-policy": "sandbox",
      "x-content-type-options": "nosniff",
    });
    expect(reply.headers["content-disposition"]).toBeUndefined();
  });

  it("keeps the headers on ranges, 304s and 404s", async () => {
    const app = await serve(false);
    const range = await app.inject({
      method: "GET",
      url: "/files/site/file.html",
      headers: { range: "bytes=0-3" },
    });
    expect(range.statusCode).toBe(206);
    const notModified = await app.inject({
      method: "GET",
      url: "/files/site/file.html",
      headers: { "if-none-match": String(range.headers.etag) },
    });
    expect(notModified.statusCode).toBe(304);
    const missing = await app.inject({ method: "GET", url: "/files/site/missing.html" });
    expect(missing.statusCode).toBe(404);
    for (const reply of [range, notModified, missing]) {
      expect(reply.headers["content-security-policy"]).toBe("sandbox");
      expect(reply.headers["x-content-type-options"]).toBe("nosniff");
    }
    expect(range.headers["content-disposition"]).toBe("attachment");
  });

  it.each(ACTIVE)(
    "serves a .%s file inline, still sandboxed and unsniffed, when the operator opts out",
    async (extension) => {
      const app = await serve(true);
      const reply = await app.inject({ method: "GET", url: `/files/site/${fileName(extension)}` });
      expect(reply.statusCode).toBe(200);
      expect(reply.headers["content-disposition"]).toBeUndefined();
      expect(reply.headers).toMatchObject({
        "content-security-policy": "sandbox",
        "x-content-type-options": "nosniff",
      });
    },
  );

  it.each([
    ["text/html; charset=utf-8", true],
    ["TEXT/HTML", true],
    ["application/vnd.google-earth.kml+xml", true],
    ["text/plain; charset=utf-8", false],
    ["application/octet-stream", false],
    ["", false],
  ])("counts %j as active: %s", (contentType, active) => {
    expect(isActiveContent(contentType)).toBe(active);
  });
});
