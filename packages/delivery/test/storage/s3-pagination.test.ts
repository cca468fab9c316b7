import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3ObjectStore } from "../../src/storage/s3-store.js";

// s3rver cannot continue a truncated ListObjectsV2 on Node ≥ 17, so paging and delete batches
// are checked against this minimal S3 endpoint on loopback (path-style `/<bucket>/`, no
// signature check).

const KEYS = Array.from({ length: 7 }, (_, n) => `app/1.0.0/file-${n}.bin`);

function listXml(keys: string[], truncated: boolean, next?: string): string {
  const contents = keys
    .map(
      (key) =>
        `<Contents><Key>${key}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"e"</ETag><Size>${key.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
    )
    .join("");
  return `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><KeyCount>${keys.length}</KeyCount><IsTruncated>${truncated}</IsTruncated>${next ? `<NextContinuationToken>${next}</NextContinuationToken>` : ""}${contents}</ListBucketResult>`;
}

describe("the objectstore provider against a paging S3 endpoint", () => {
  let app: FastifyInstance;
  let store: S3ObjectStore;
  const listCalls: Array<Record<string, string>> = [];
  const deleteBatches: number[] = [];

  beforeAll(async () => {
    app = Fastify();
    app.addContentTypeParser("application/xml", { parseAs: "string" }, (_req, body, done) =>
      done(null, body),
    );
    app.get<{ Querystring: Record<string, string> }>("/bucket/", async (request, reply) => {
      listCalls.push(request.query);
      const prefix = request.query.prefix ?? "";
      const max = Number(request.query["max-keys"] ?? 1000);
      const start = Number(request.query["continuation-token"] ?? 0);
      const matching = KEYS.filter((key) => key.startsWith(prefix));
      const page = matching.slice(start, start + max);
      const more = start + max < matching.length;
      return reply
        .type("application/xml")
        .send(listXml(page, more, more ? String(start + max) : undefined));
    });
    app.post<{ Body: string }>("/bucket/", async (request, reply) => {
      deleteBatches.push((request.body.match(/<Key>/g) ?? []).length);
      return reply
        .type("application/xml")
        .send(
          `<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></DeleteResult>`,
        );
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    if (!address || typeof address === "string") throw new Error("no address");
    store = new S3ObjectStore({
      endpoint: `http://127.0.0.1:${address.port}`,
      region: "us-east-1",
      accessKeyId: "key",
      secretAccessKey: "secret",
      listPageSize: 3,
    });
  });
  afterAll(async () => {
    store.close();
    await app.close();
  });

  it("follows continuation tokens to the last page", async () => {
    const keys: string[] = [];
    for await (const object of store.list("bucket", "app/")) keys.push(object.key);
    expect(keys).toEqual(KEYS);
    expect(listCalls.map((query) => query["continuation-token"])).toEqual([undefined, "3", "6"]);
    expect(listCalls.every((query) => query["max-keys"] === "3" && query.prefix === "app/")).toBe(
      true,
    );
  });

  it("deletes in batches of at most 1000 keys", async () => {
    const many = Array.from({ length: 2345 }, (_, n) => `old/${n}.bin`);
    await store.delete("bucket", many);
    expect(deleteBatches).toEqual([1000, 1000, 345]);
  });
});
