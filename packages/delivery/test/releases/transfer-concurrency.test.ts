import type { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ObjectStore, PutOptions } from "../../src/storage/object-store.js";
import { createProcessingHarness, type ProcessingHarness } from "./processing-harness.js";

/** The object store, counting the uploads in flight (each held a little, to overlap). */
function countingStore(inner: ObjectStore) {
  const seen = { inFlight: 0, max: 0, alongsideLarge: 0 };
  let largeInFlight = false;
  const store: ObjectStore = {
    provider: inner.provider,
    async put(bucket: string, key: string, body: Readable, options: PutOptions) {
      const large = key.includes("large");
      seen.inFlight += 1;
      seen.max = Math.max(seen.max, seen.inFlight);
      if (large) largeInFlight = true;
      if (largeInFlight && seen.inFlight > 1) seen.alongsideLarge += 1;
      try {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return await inner.put(bucket, key, body, options);
      } finally {
        seen.inFlight -= 1;
        if (large) largeInFlight = false;
      }
    },
    list: (bucket, prefix) => inner.list(bucket, prefix),
    delete: (bucket, keys) => inner.delete(bucket, keys),
    isHealthy: () => inner.isHealthy(),
    close: () => inner.close(),
  };
  return { store, seen };
}

describe("bounded parallel transfers (PUBLISH_CONCURRENCY)", () => {
  let h: ProcessingHarness;
  beforeAll(async () => {
    h = await createProcessingHarness();
  });
  afterAll(() => h.close());

  it("publishes small files at most N at once, a large one alone, in declaration order", async () => {
    const names = [
      ...Array.from({ length: 7 }, (_, n) => `small-${n}.bin`),
      "large.bin",
      ...Array.from({ length: 5 }, (_, n) => `small-${n + 7}.bin`),
    ];
    const repository = await h.addRepository("acme/parallel");
    h.releases.addRelease("acme/parallel", {
      tag: "v1.0.0",
      assets: names.map((name) => ({
        name,
        content: name === "large.bin" ? { generated: 3 * 1024 * 1024 } : `${name} bytes`,
      })),
      files: {
        ".delivery.yml": [
          "storage: {provider: objectstore, bucket: downloads}",
          "publish: {auto_latest: false}",
          "artifacts:",
          ...names.map((name) => `  - {source: ${name}, destination: ${name}}`),
        ].join("\n"),
      },
    });
    const counting = countingStore(h.objectstore);
    const processor = h.processor({
      storage: { ...h.storage, objectstore: counting.store },
      policy: { transferConcurrency: 3 },
    });
    const processing = await processor.check(repository, "manual");

    expect(processing.result.errors).toEqual([]);
    expect(processing.result.processed.map((file) => file.file)).toEqual(names);
    expect(counting.seen.max).toBe(3);
    expect(counting.seen.alongsideLarge).toBe(0);
  });

  it("starts nothing after a failure, and keeps what finished", async () => {
    const names = Array.from({ length: 8 }, (_, n) => `part-${n}.bin`);
    const repository = await h.addRepository("acme/parallel-fail");
    h.releases.addRelease("acme/parallel-fail", {
      tag: "v1.0.0",
      assets: names.map((name) => ({ name, content: `${name} bytes` })),
      files: {
        ".delivery.yml": [
          "storage: {provider: objectstore, bucket: downloads}",
          "publish: {auto_latest: false}",
          "artifacts:",
          ...names.map((name) => `  - {source: ${name}, destination: ${name}}`),
        ].join("\n"),
      },
    });
    const attempted: string[] = [];
    const failing: ObjectStore = {
      ...h.objectstore,
      provider: "objectstore",
      list: (bucket, prefix) => h.objectstore.list(bucket, prefix),
      delete: (bucket, keys) => h.objectstore.delete(bucket, keys),
      isHealthy: () => h.objectstore.isHealthy(),
      close: () => {},
      async put(bucket, key, body, options) {
        attempted.push(key);
        if (key.endsWith("part-1.bin")) {
          body.resume();
          throw new Error("storage refused part-1");
        }
        return h.objectstore.put(bucket, key, body, options);
      },
    };
    const processor = h.processor({
      storage: { ...h.storage, objectstore: failing },
      policy: { transferConcurrency: 2, retryDelaysMs: [] },
    });
    const processing = await processor.check(repository, "manual");

    expect(processing.outcome === "published" && processing.record.status).toBe("failed");
    expect(processing.result.errors).toEqual(["artifact part-1.bin: storage refused part-1"]);
    // part-0 and part-1 ran together; part-2 may have started as part-0 ended; no more after.
    expect(attempted.length).toBeLessThanOrEqual(3);
    expect(processing.result.processed.map((file) => file.file)).toEqual(
      names.slice(0, attempted.length).filter((name) => name !== "part-1.bin"),
    );
  });
});
