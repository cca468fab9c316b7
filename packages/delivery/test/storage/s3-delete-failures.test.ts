import { Readable } from "node:stream";
import {
  CreateBucketCommand,
  DeleteBucketPolicyCommand,
  PutBucketPolicyCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ReleaseProcessor } from "../../src/releases/release-processor.js";
import type { S3ObjectStore } from "../../src/storage/s3-store.js";
import { createProcessingHarness, type ProcessingHarness } from "../releases/processing-harness.js";
import { type MotoServer, startMotoServer } from "./moto-server.js";

// Batch deletes that S3 answers with per-key errors: moto applies a bucket policy key by key in
// DeleteObjects (as S3 does), so a policy denying s3:DeleteObject under one prefix makes a real
// partial failure: the other keys are deleted, those keys come back in `Errors`.

const moto = await startMotoServer();
const BUCKET = "partial";

/** A bucket policy refusing deletes of the keys under `prefix`. */
function denyDeletes(prefix: string): string {
  return JSON.stringify({
    Version: "2012-10-17",
    Statement: [
      {
        Effect: "Deny",
        Principal: "*",
        Action: "s3:DeleteObject",
        Resource: `arn:aws:s3:::${BUCKET}/${prefix}*`,
      },
    ],
  });
}

describe.skipIf(moto === null)("batch deletes partly refused by moto's S3 server", () => {
  const server = moto as MotoServer;
  let client: S3Client;
  let store: S3ObjectStore;
  let h: ProcessingHarness;

  beforeAll(async () => {
    client = server.client();
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
    store = server.store();
    h = await createProcessingHarness();
  });
  afterEach(async () => {
    await client.send(new DeleteBucketPolicyCommand({ Bucket: BUCKET }));
  });
  afterAll(async () => {
    await h?.close();
    await server.close();
  });

  const put = (key: string, text = key) =>
    store.put(BUCKET, key, Readable.from([Buffer.from(text)]), { contentType: "text/plain" });
  const listed = async (prefix: string) => {
    const keys: string[] = [];
    for await (const object of store.list(BUCKET, prefix)) keys.push(object.key);
    return keys.sort();
  };

  it("deletes what it may, and fails naming each refused key with its code", async () => {
    for (const key of ["keys/locked/a.bin", "keys/locked/b.bin", "keys/free/c.bin"]) await put(key);
    await client.send(
      new PutBucketPolicyCommand({ Bucket: BUCKET, Policy: denyDeletes("keys/locked/") }),
    );

    const deleting = store.delete(BUCKET, [
      "keys/locked/a.bin",
      "keys/free/c.bin",
      "keys/locked/b.bin",
    ]);

    await expect(deleting).rejects.toThrow(
      "could not delete 2 of 3 object(s) after 2 attempts: keys/locked/a.bin (AccessDenied: Access Denied), keys/locked/b.bin (AccessDenied: Access Denied)",
    );
    expect(await listed("keys/")).toEqual(["keys/locked/a.bin", "keys/locked/b.bin"]);
  });

  it("names five refused keys and counts the rest", async () => {
    const locked = Array.from({ length: 7 }, (_, n) => `many/locked/${n}.bin`);
    for (const key of locked) await put(key);
    await client.send(
      new PutBucketPolicyCommand({ Bucket: BUCKET, Policy: denyDeletes("many/locked/") }),
    );

    await expect(store.delete(BUCKET, locked)).rejects.toThrow(
      /^could not delete 7 of 7 object\(s\) after 2 attempts: (many\/locked\/\d\.bin \(AccessDenied: Access Denied\), ){4}many\/locked\/\d\.bin \(AccessDenied: Access Denied\), and 2 more$/,
    );
    expect(await listed("many/")).toEqual(locked);
  });

  it("makes a release whose pruning was partly refused partial, naming the key kept", async () => {
    const processor: ReleaseProcessor = h.processor({
      storage: { ...h.storage, objectstore: store },
    });
    const declaration = `storage: {provider: objectstore, bucket: ${BUCKET}}\npublish: {max_versions: 1}\nartifacts: [{source: a.bin, destination: a.bin}]\n`;
    const repository = await h.addRepository("acme/pruned");
    const publish = async (tag: string, day: number) => {
      h.releases.addRelease("acme/pruned", {
        tag,
        createdAt: new Date(Date.UTC(2026, 1, day)).toISOString(),
        assets: [{ name: "a.bin", content: tag }],
        files: { ".delivery.yml": declaration },
      });
      const processing = await processor.checkTag(repository, tag, "webhook");
      if (processing.outcome !== "published") throw new Error(processing.outcome);
      return processing.record;
    };
    expect((await publish("v1.0.0", 1)).status).toBe("success");
    await client.send(
      new PutBucketPolicyCommand({ Bucket: BUCKET, Policy: denyDeletes("pruned/1.0.0/a.bin") }),
    );

    const record = await publish("v2.0.0", 2);

    expect(record.status).toBe("partial");
    expect(record.errors).toEqual([
      "pruning old versions failed: could not delete 1 of 3 object(s) after 2 attempts: pruned/1.0.0/a.bin (AccessDenied: Access Denied)",
    ]);
    // The rest of the old version went; the refused file stayed, nothing was taken for done.
    expect(await listed("pruned/1.0.0/")).toEqual(["pruned/1.0.0/a.bin"]);
    expect(await listed("pruned/2.0.0/")).toEqual([
      "pruned/2.0.0/SHA256SUMS",
      "pruned/2.0.0/a.bin",
      "pruned/2.0.0/manifest.json",
    ]);
  });
});
