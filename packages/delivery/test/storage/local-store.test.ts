import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { INCOMING_DIR, LocalObjectStore } from "../../src/storage/local-store.js";
import { assertBucketName, keyProblem } from "../../src/storage/object-store.js";
import { readPublished } from "../helpers/published-objects.js";

describe("object keys", () => {
  it.each([
    ["app/1.0.0/app.zip", null],
    ["docs/README.md", null],
    ["a/.nojekyll", null],
    ["", "empty"],
    ["/etc/passwd", "absolute path"],
    ["../x", '".." path segment'],
    ["a/../../x", '".." path segment'],
    ["a/./x", '"." path segment'],
    ["a//x", "empty path segment"],
    ["a/", "empty path segment"],
    ["C:/Windows/x", "drive letter"],
    ["a\\..\\x", "contains a backslash"],
    ["a\0b", "contains NUL"],
    ["x".repeat(1025), "longer than 1024 bytes"],
  ])("%j is %s", (key, problem) => {
    expect(keyProblem(key)).toBe(problem);
  });

  it.each(["..", ".hidden", "UPPER", "a", "x/y", "a..b"])("bucket name %j is refused", (name) => {
    expect(() => assertBucketName(name)).toThrow(/invalid bucket name/);
  });

  it.each(["releases", "my-bucket.v2", "abc"])("bucket name %j is accepted", (name) => {
    expect(() => assertBucketName(name)).not.toThrow();
  });
});

describe("the local object store", () => {
  let dir: { path: string; remove(): Promise<void> };
  let store: LocalObjectStore;

  beforeEach(async () => {
    dir = await makeTempDir();
    store = new LocalObjectStore(dir.path);
  });
  afterEach(() => dir.remove());

  it("keeps objects as files under <root>/<bucket>/<key>", async () => {
    await store.put("site", "app/1.0.0/app.bin", Readable.from([Buffer.from("bytes")]), {
      contentType: "application/octet-stream",
    });
    expect((await stat(join(dir.path, "site", "app", "1.0.0", "app.bin"))).size).toBe(5);
  });

  it("never shows a half-written object: the file appears only once complete", async () => {
    const body = new PassThrough();
    const writing = store.put("site", "slow.bin", body, {
      contentType: "application/octet-stream",
    });
    body.write(Buffer.alloc(4096, 7));
    // The first half is on disk (in the incoming folder) before the object is looked up.
    const incomingSizes = async () => {
      const incoming = join(dir.path, INCOMING_DIR);
      const names = await readdir(incoming).catch(() => []);
      return Promise.all(names.map(async (name) => (await stat(join(incoming, name))).size));
    };
    await expect.poll(incomingSizes, { timeout: 5_000 }).toEqual([4096]);
    expect(await readPublished(store, "site", "slow.bin")).toBeNull();
    body.end(Buffer.alloc(4096, 8));
    await writing;
    expect((await readPublished(store, "site", "slow.bin"))?.size).toBe(8192);
    expect(await readdir(join(dir.path, INCOMING_DIR))).toEqual([]);
  });

  it("removes the temp file when the source stream fails", async () => {
    const body = new PassThrough();
    const writing = store.put("site", "broken.bin", body, {
      contentType: "application/octet-stream",
    });
    body.write(Buffer.alloc(1024));
    body.destroy(new Error("connection reset"));
    await expect(writing).rejects.toThrow("connection reset");
    expect(await readdir(join(dir.path, INCOMING_DIR))).toEqual([]);
    expect(await readPublished(store, "site", "broken.bin")).toBeNull();
  });

  it("removes folders a delete leaves empty, but not the bucket", async () => {
    await store.put("site", "app/1.0.0/a/b.txt", Readable.from([Buffer.from("b")]), {
      contentType: "text/plain",
    });
    await store.delete("site", ["app/1.0.0/a/b.txt"]);
    expect(await readdir(join(dir.path, "site"))).toEqual([]);
  });

  it("derives the content type of a read from the key's extension", async () => {
    await store.put("site", "docs/guide.md", Readable.from([Buffer.from("# Guide")]), {
      contentType: "text/markdown",
    });
    expect((await readPublished(store, "site", "docs/guide.md"))?.contentType).toBe(
      "text/markdown; charset=utf-8",
    );
  });

  it("refuses a bucket name that would leave the root", async () => {
    await expect(
      store.put("..", "x.txt", Readable.from([Buffer.from("x")]), { contentType: "text/plain" }),
    ).rejects.toMatchObject({ code: "invalid_bucket_name" });
    expect(() => store.pathOf(".incoming", "x")).toThrow(/invalid bucket name/);
  });

  it("reports itself unhealthy when its root cannot be created", async () => {
    const blocked = new LocalObjectStore("/proc/version/files");
    expect(await blocked.isHealthy()).toBe(false);
  });
});
