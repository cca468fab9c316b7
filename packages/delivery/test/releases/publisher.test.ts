import { createHash } from "node:crypto";
import { join } from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PublishTarget, publishFile, publishZip } from "../../src/releases/publisher.js";
import { LocalObjectStore } from "../../src/storage/local-store.js";
import { readPublished } from "../helpers/published-objects.js";
import { buildZip, withRawName } from "./zip-fixture.js";

const rule = (source: string, destination: string, latest = true, versioned = true) => ({
  source,
  destination,
  latest,
  versioned,
});

describe("publishing release files", () => {
  let dir: { path: string; remove(): Promise<void> };
  let store: LocalObjectStore;
  let target: PublishTarget;

  beforeEach(async () => {
    dir = await makeTempDir();
    store = new LocalObjectStore(join(dir.path, "files"));
    target = {
      store,
      bucket: "site",
      placement: { folderName: "widget", tag: "v2.1.0", deliveryUrl: "http://cdn.test/site" },
      tempDir: join(dir.path, "tmp"),
      floatingCacheControl: "public, max-age=300",
    };
  });
  afterEach(() => dir.remove());

  const read = async (key: string) => {
    const object = await readPublished(store, "site", key);
    return object ? text(object.body) : null;
  };

  it("warns of no listener leak when one source feeds two keys", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      await publishFile(target, rule("w.bin", "bin/w-{version}.bin"), Readable.from(["bytes"]));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });

  it("writes one source to its versioned and latest keys, reading it once", async () => {
    let reads = 0;
    const source = Readable.from(
      (function* () {
        reads += 1;
        yield Buffer.from("binary-");
        yield Buffer.from("content");
      })(),
    );
    const published = await publishFile(target, rule("w.bin", "bin/w-{version}.bin"), source);
    expect(published).toEqual({
      file: "w.bin",
      size: 14,
      sha256: createHash("sha256").update("binary-content").digest("hex"),
      contentType: "application/octet-stream",
      targets: {
        versionedKey: "widget/2.1.0/bin/w-2.1.0.bin",
        latestKey: "widget/latest/bin/w-latest.bin",
      },
    });
    expect(reads).toBe(1);
    expect(await read("widget/2.1.0/bin/w-2.1.0.bin")).toBe("binary-content");
    expect(await read("widget/latest/bin/w-latest.bin")).toBe("binary-content");
  });

  it("fails when the source fails, leaving neither copy", async () => {
    const source = new Readable({
      read() {
        this.push(Buffer.alloc(100));
        this.destroy(new Error("download cut"));
      },
    });
    await expect(publishFile(target, rule("w.bin", "w.bin"), source)).rejects.toThrow(
      "download cut",
    );
    expect(await read("widget/2.1.0/w.bin")).toBeNull();
    expect(await read("widget/latest/w.bin")).toBeNull();
  });

  it("publishes the entries of a zip under the destination folder and refuses zip-slip entries", async () => {
    const zip = withRawName(
      await buildZip([
        ["index.html", "<h1>site</h1>"],
        ["css/", null],
        ["css/site.css", "body{}"],
        ["EVILEVILEVILEVILEVIL", "pwned"],
      ]),
      "EVILEVILEVILEVILEVIL",
      "../../../../evil.txt",
    );
    const published = await publishZip(
      target,
      rule("site.zip", "site", false, true),
      Readable.from([zip]),
    );
    expect(published.size).toBe(zip.length);
    expect(
      published.files.map((file) => [file.file, file.size, file.targets.versionedKey]),
    ).toEqual([
      ["site.zip/index.html", 13, "widget/2.1.0/site/index.html"],
      ["site.zip/css/site.css", 6, "widget/2.1.0/site/css/site.css"],
    ]);
    expect(published.refused).toEqual([
      'zip entry "../../../../evil.txt" refused: ".." path segment',
    ]);
    const keys: string[] = [];
    for await (const object of store.list("site", "")) keys.push(object.key);
    expect(keys.sort()).toEqual(["widget/2.1.0/site/css/site.css", "widget/2.1.0/site/index.html"]);
    expect(await read("widget/2.1.0/site/css/site.css")).toBe("body{}");
  });
});
