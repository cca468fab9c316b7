import { Readable } from "node:stream";
import {
  CreateBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MotoServer, startMotoServer } from "./moto-server.js";

const moto = await startMotoServer();
const BUCKET = "independent";
const MIB = 1024 * 1024;

describe.skipIf(moto === null)("the objectstore provider against moto's S3 server", () => {
  const server = moto as MotoServer;
  let client: S3Client;

  beforeAll(async () => {
    client = server.client();
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  });
  afterAll(async () => {
    await server.close();
  });

  const body = (text: string) => Readable.from([Buffer.from(text)]);

  it("follows continuation tokens to the last page of a listing", async () => {
    const keys = Array.from({ length: 7 }, (_, n) => `paged/1.0.0/file-${n}.bin`);
    const store = server.store({ listPageSize: 3 });
    for (const key of keys) {
      await store.put(BUCKET, key, body(key), { contentType: "application/octet-stream" });
    }
    await store.put(BUCKET, "other/x.bin", body("x"), { contentType: "text/plain" });
    // The server does page: a first page of 3 says there is more.
    const first = await client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: "paged/", MaxKeys: 3 }),
    );
    expect(first.IsTruncated).toBe(true);
    expect(first.NextContinuationToken).toBeTruthy();

    const listed: string[] = [];
    for await (const object of store.list(BUCKET, "paged/")) listed.push(object.key);
    expect(listed.sort()).toEqual(keys.sort());
  });

  it("aborts a multipart upload whose source fails: no object, no upload left open", async () => {
    const store = server.store();
    // More than one 8 MiB part goes up before the source breaks off.
    async function* breaking() {
      for (let sent = 0; sent < 20 * MIB; sent += MIB) yield Buffer.alloc(MIB, 7);
      throw new Error("the download broke off");
    }
    await expect(
      store.put(BUCKET, "aborted/big.bin", Readable.from(breaking()), {
        contentType: "application/octet-stream",
      }),
    ).rejects.toThrow("the download broke off");
    const listed: string[] = [];
    for await (const object of store.list(BUCKET, "aborted/")) listed.push(object.key);
    expect(listed).toEqual([]);
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
    expect(uploads.Uploads ?? []).toEqual([]);
  });

  it("writes a multipart object intact, with its metadata", async () => {
    const store = server.store();
    const size = 17 * MIB + 5;
    const data = Buffer.alloc(size);
    for (let i = 0; i < size; i++) data[i] = (i * 31) & 0xff;
    const stored = await store.put(BUCKET, "multi/blob.bin", Readable.from([data]), {
      contentType: "application/octet-stream",
      cacheControl: "public, max-age=31536000, immutable",
    });
    expect(stored.size).toBe(size);
    const answer = await fetch(`${server.endpoint}/${BUCKET}/multi/blob.bin`);
    expect(answer.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(Buffer.from(await answer.arrayBuffer()).equals(data)).toBe(true);
  });

  it("deletes the given keys and ignores keys that do not exist", async () => {
    const store = server.store();
    await store.put(BUCKET, "gone/a.bin", body("a"), { contentType: "text/plain" });
    await store.put(BUCKET, "gone/b.bin", body("b"), { contentType: "text/plain" });
    await store.delete(BUCKET, ["gone/a.bin", "gone/never-there.bin"]);
    const listed: string[] = [];
    for await (const object of store.list(BUCKET, "gone/")) listed.push(object.key);
    expect(listed).toEqual(["gone/b.bin"]);
  });

  it("refuses a body that does not match its announced length: no object, no upload open", async () => {
    const store = server.store();
    const chunks = (sizes: number[]) => Readable.from(sizes.map((size) => Buffer.alloc(size, 1)));
    // One part short of its length, several parts long of it, and a multipart body short.
    const cases = [
      {
        key: "length/short.bin",
        body: chunks([9]),
        contentLength: 10,
        why: "9 bytes instead of the announced 10",
      },
      {
        key: "length/long.bin",
        body: chunks([6 * MIB, 6 * MIB]),
        contentLength: 11 * MIB,
        why: `more bytes than the announced ${11 * MIB}`,
      },
      {
        key: "length/multi.bin",
        body: chunks([6 * MIB, 5 * MIB]),
        contentLength: 12 * MIB,
        why: `${11 * MIB} bytes instead of the announced ${12 * MIB}`,
      },
    ];
    for (const { key, body, contentLength, why } of cases) {
      await expect(
        store.put(BUCKET, key, body, { contentType: "application/octet-stream", contentLength }),
      ).rejects.toThrow(why);
    }
    const listed: string[] = [];
    for await (const object of store.list(BUCKET, "length/")) listed.push(object.key);
    expect(listed).toEqual([]);
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
    expect(uploads.Uploads ?? []).toEqual([]);
  });
});
