import { text } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReleaseProcessor } from "../../src/releases/release-processor.js";
import type { ObjectStore } from "../../src/storage/object-store.js";
import { readPublished } from "../helpers/published-objects.js";
import { createProcessingHarness, type ProcessingHarness } from "./processing-harness.js";
import type { DownloadFault } from "./release-stub.js";
import { buildZip } from "./zip-fixture.js";

// Downloads that break off behind the code host's redirect, while the release is processed in
// this process: any error escaping a stream would fail the run as an unhandled error.
// (Stalled downloads, cut by the idle timeout, are covered end to end in
// test/process/broken-downloads.test.ts.)

const BINARY = "0123456789".repeat(1000);
const KINDS: ReadonlyArray<DownloadFault["kind"]> = ["truncated", "reset"];
const PROVIDERS = [
  { provider: "local", bucket: "public" },
  { provider: "objectstore", bucket: "downloads" },
] as const;
const TYPES = ["binary", "zip"] as const;

describe("a download that breaks off", () => {
  let h: ProcessingHarness;
  let processor: ReleaseProcessor;
  let siteZip: Buffer;

  beforeAll(async () => {
    h = await createProcessingHarness();
    processor = h.processor();
    siteZip = await buildZip([
      ["index.html", "<h1>Widget</h1>".repeat(50)],
      ["assets/app.js", "console.log(1)".repeat(50)],
    ]);
  });
  afterAll(() => h.close());

  function storeOf(provider: "local" | "objectstore"): ObjectStore {
    return provider === "local" ? h.local : h.objectstore;
  }

  for (const { provider, bucket } of PROVIDERS) {
    for (const type of TYPES) {
      for (const kind of KINDS) {
        it(`${kind} on every attempt (${type}, ${provider}): the release fails with the reason, nothing is published, the next check publishes it`, async () => {
          const folder = `${kind}-${type}-${provider}`;
          const fullName = `acme/${folder}`;
          const content = type === "zip" ? siteZip : Buffer.from(BINARY);
          const asset = type === "zip" ? "site.zip" : "tool.bin";
          const fault: DownloadFault = { kind, after: Math.floor(content.length / 2) };
          const repository = await h.addRepository(fullName);
          h.releases.addRelease(fullName, {
            tag: "v1.0.0",
            // One fault per attempt of the first check (three attempts).
            assets: [{ name: asset, content, faults: [fault, fault, fault] }],
            files: {
              ".delivery.yml": `storage: {provider: ${provider}, bucket: ${bucket}}
artifacts: [{source: ${asset}, destination: ${type === "zip" ? "site" : asset}, type: ${type}, latest: true}]
`,
            },
          });
          const store = storeOf(provider);

          const failed = await processor.check(repository, "scheduler");
          expect(failed.outcome === "published" && failed.record.status).toBe("failed");
          expect(failed.result.errors).toEqual([
            expect.stringMatching(
              new RegExp(`^artifact ${asset.replace(".", "\\.")}: The download broke off`),
            ),
          ]);
          expect(await h.keys(store, bucket, `${folder}/`)).toEqual([]);

          const retried = await processor.check(repository, "scheduler");
          expect(retried.outcome === "published" && retried.record.status).toBe("success");
          if (type === "binary") {
            for (const key of [`${folder}/1.0.0/${asset}`, `${folder}/latest/${asset}`]) {
              const object = await readPublished(store, bucket, key);
              expect(object && (await text(object.body))).toBe(BINARY);
            }
          } else {
            expect(await h.keys(store, bucket, `${folder}/`)).toEqual([
              `${folder}/1.0.0/site/assets/app.js`,
              `${folder}/1.0.0/site/index.html`,
              `${folder}/latest/site/assets/app.js`,
              `${folder}/latest/site/index.html`,
            ]);
          }
          const { history } = await h.history.list({ limit: 10, repositoryId: repository.id });
          expect(history.map((record) => record.status)).toEqual(["success"]);
        });
      }
    }
  }
});
