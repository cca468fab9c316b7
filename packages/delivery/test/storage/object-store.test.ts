import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalObjectStore } from "../../src/storage/local-store.js";
import type { ObjectStore } from "../../src/storage/object-store.js";
import { readPublished } from "../helpers/published-objects.js";
import { type S3Server, startS3Server } from "./s3-server.js";

const BUCKET = "releases";

/** A stream of `size` deterministic bytes produced chunk by chunk (never held whole). */
function generatedStream(size: number, chunkSize = 64 * 1024): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return this.push(null);
      const length = Math.min(chunkSize, size - sent);
      const chunk = Buffer.alloc(length, sent % 251);
      sent += length;
      this.push(chunk);
    },
  });
}

async function keysOf(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of store.list(BUCKET, prefix)) keys.push(object.key);
  return keys.sort();
}

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

interface Provider {
  name: string;
  open(): Promise<{ store: ObjectStore; close(): Promise<void> }>;
}

const PROVIDERS: Provider[] = [
  {
    name: "local",
    async open() {
      const dir = await makeTempDir();
      return { store: new LocalObjectStore(dir.path), close: dir.remove };
    },
  },
  {
    name: "objectstore (s3rver)",
    async open() {
      const server: S3Server = await startS3Server([BUCKET]);
      return { store: server.store(), close: () => server.close() };
    },
  },
];

for (const provider of PROVIDERS) {
  describe(`the ${provider.name} object store`, () => {
    let store: ObjectStore;
    let close: () => Promise<void>;

    beforeAll(async () => {
      ({ store, close } = await provider.open());
    });
    afterAll(() => close());

    it("stores a stream of unknown length and reads back the same bytes and content type", async () => {
      const data = Buffer.from("hello, release\n".repeat(1000));
      const { size } = await store.put(BUCKET, "app/1.0.0/notes.txt", Readable.from([data]), {
        contentType: "text/plain",
      });
      expect(size).toBe(data.length);

      const read = await readPublished(store, BUCKET, "app/1.0.0/notes.txt");
      expect(read).not.toBeNull();
      expect(read?.size).toBe(data.length);
      expect(read?.contentType).toMatch(/^text\/plain/);
      expect(await buffer(read?.body as Readable)).toEqual(data);
    });

    it("stores a multi-part body (larger than one upload part) intact", async () => {
      const size = 20 * 1024 * 1024 + 123;
      const { size: stored } = await store.put(BUCKET, "big/asset.bin", generatedStream(size), {
        contentType: "application/octet-stream",
      });
      expect(stored).toBe(size);
      const read = await readPublished(store, BUCKET, "big/asset.bin");
      const back = await buffer(read?.body as Readable);
      expect(back.length).toBe(size);
      expect(sha256(back)).toBe(sha256(await buffer(generatedStream(size))));
    });

    it("stores a body whose length is announced", async () => {
      const data = Buffer.from("known length");
      await store.put(BUCKET, "known/file.bin", Readable.from([data]), {
        contentType: "application/octet-stream",
        contentLength: data.length,
      });
      expect((await readPublished(store, BUCKET, "known/file.bin"))?.size).toBe(data.length);
    });

    it("lists every key under a prefix and nothing outside it", async () => {
      for (const key of ["list/a/1.txt", "list/a/2.txt", "list/b/3.txt", "listed-elsewhere.txt"]) {
        await store.put(BUCKET, key, Readable.from([Buffer.from(key)]), {
          contentType: "text/plain",
        });
      }
      expect(await keysOf(store, "list/")).toEqual([
        "list/a/1.txt",
        "list/a/2.txt",
        "list/b/3.txt",
      ]);
      expect(await keysOf(store, "list/a/")).toEqual(["list/a/1.txt", "list/a/2.txt"]);
      expect(await keysOf(store, "list")).toContain("listed-elsewhere.txt");
      expect(await keysOf(store, "nothing-here/")).toEqual([]);
    });

    it("reports the size of listed objects", async () => {
      await store.put(BUCKET, "sized/five.bin", Readable.from([Buffer.from("12345")]), {
        contentType: "application/octet-stream",
      });
      const listed = [];
      for await (const object of store.list(BUCKET, "sized/")) listed.push(object);
      expect(listed).toEqual([{ key: "sized/five.bin", size: 5, lastModified: expect.any(Date) }]);
    });

    it("deletes keys and ignores keys that do not exist", async () => {
      for (const key of ["del/x.txt", "del/y.txt", "del/keep.txt"]) {
        await store.put(BUCKET, key, Readable.from([Buffer.from(key)]), {
          contentType: "text/plain",
        });
      }
      await store.delete(BUCKET, ["del/x.txt", "del/y.txt", "del/never-existed.txt"]);
      expect(await keysOf(store, "del/")).toEqual(["del/keep.txt"]);
      expect(await readPublished(store, BUCKET, "del/x.txt")).toBeNull();
    });

    it("replaces an object written twice", async () => {
      await store.put(BUCKET, "twice.txt", Readable.from([Buffer.from("first")]), {
        contentType: "text/plain",
      });
      await store.put(BUCKET, "twice.txt", Readable.from([Buffer.from("second!")]), {
        contentType: "text/plain",
      });
      const read = await readPublished(store, BUCKET, "twice.txt");
      expect((await buffer(read?.body as Readable)).toString()).toBe("second!");
    });

    it("refuses keys that could escape the bucket", async () => {
      for (const key of ["../outside.txt", "/etc/passwd", "a/../../b", "a\\..\\b", "nul\0.txt"]) {
        await expect(
          store.put(BUCKET, key, Readable.from([Buffer.from("x")]), { contentType: "text/plain" }),
        ).rejects.toMatchObject({ code: "invalid_object_key" });
      }
    });

    it("fails the write when the source stream fails, leaving no object behind", async () => {
      const failing = new Readable({
        read() {
          this.push(Buffer.alloc(1024, 1));
          this.destroy(new Error("download broke"));
        },
      });
      await expect(
        store.put(BUCKET, "broken/asset.bin", failing, { contentType: "application/octet-stream" }),
      ).rejects.toThrow();
      expect(await readPublished(store, BUCKET, "broken/asset.bin")).toBeNull();
    });

    it("reports itself healthy", async () => {
      expect(await store.isHealthy()).toBe(true);
    });
  });
}

describe("the objectstore provider", () => {
  it("reports itself unhealthy when nothing answers at its endpoint", async () => {
    const server = await startS3Server([]);
    const store = server.store();
    await server.close();
    expect(await store.isHealthy()).toBe(false);
  });
});
