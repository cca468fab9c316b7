import { Readable } from "node:stream";
import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneVersions, versionsKept, versionsToPrune } from "../../src/releases/pruning.js";
import { LocalObjectStore } from "../../src/storage/local-store.js";
import type { ObjectStore } from "../../src/storage/object-store.js";
import { startS3Server } from "../storage/s3-server.js";

const BUCKET = "releases";
const day = (n: number) => new Date(Date.UTC(2026, 0, n));

describe("which versions are pruned", () => {
  it.each([
    [{ preserveVersions: true, maxVersions: 3, autoLatest: true, prereleaseChannel: null }, 3],
    [
      { preserveVersions: true, maxVersions: null, autoLatest: true, prereleaseChannel: null },
      null,
    ],
    [{ preserveVersions: false, maxVersions: 5, autoLatest: true, prereleaseChannel: null }, 1],
  ])("publish %j keeps %s versions", (publish, kept) => {
    expect(versionsKept(publish)).toBe(kept);
  });

  it("keeps the newest by release date, not by name, and never counts latest", () => {
    const folders = [
      { version: "1.10.0", date: day(10) },
      { version: "1.9.0", date: day(9) },
      { version: "2.0.0-old-branch", date: day(1) },
      { version: "latest", date: day(30) },
      { version: "1.2.0", date: day(2) },
    ];
    expect(versionsToPrune(folders, 2)).toEqual(["1.2.0", "2.0.0-old-branch"]);
    expect(versionsToPrune(folders, 10)).toEqual([]);
  });
});

const PROVIDERS: Array<[string, () => Promise<{ store: ObjectStore; close(): Promise<void> }>]> = [
  [
    "local",
    async () => {
      const dir = await makeTempDir();
      return { store: new LocalObjectStore(dir.path), close: dir.remove };
    },
  ],
  [
    "objectstore (s3rver)",
    async () => {
      const server = await startS3Server([BUCKET]);
      return { store: server.store(), close: () => server.close() };
    },
  ],
];

for (const [name, open] of PROVIDERS) {
  describe(`pruning on the ${name} store`, () => {
    let store: ObjectStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(() => close());

    const put = (key: string) =>
      store.put(BUCKET, key, Readable.from([Buffer.from(key)]), { contentType: "text/plain" });
    const keys = async (prefix: string) => {
      const found: string[] = [];
      for await (const object of store.list(BUCKET, prefix)) found.push(object.key);
      return found.sort();
    };

    it("deletes versioned folders beyond the newest N and leaves latest and other folders", async () => {
      for (const version of ["1.0.0", "1.1.0", "1.2.0", "2.0.0"]) {
        await put(`app/${version}/app.bin`);
        await put(`app/${version}/docs/guide.md`);
      }
      await put("app/latest/app.bin");
      await put("other-app/1.0.0/app.bin");
      const pruned = await pruneVersions({
        store,
        bucket: BUCKET,
        folderName: "app",
        keep: 2,
        channel: null,
        releaseDates: new Map([
          ["1.0.0", day(1)],
          ["1.1.0", day(2)],
          ["1.2.0", day(3)],
          ["2.0.0", day(4)],
        ]),
      });
      expect(pruned.sort()).toEqual(["1.0.0", "1.1.0"]);
      expect(await keys("app/")).toEqual([
        "app/1.2.0/app.bin",
        "app/1.2.0/docs/guide.md",
        "app/2.0.0/app.bin",
        "app/2.0.0/docs/guide.md",
        "app/latest/app.bin",
      ]);
      expect(await keys("other-app/")).toEqual(["other-app/1.0.0/app.bin"]);
    });

    it("dates a folder whose release is gone by its newest object", async () => {
      await put("tool/0.1.0/tool.bin");
      await put("tool/0.2.0/tool.bin");
      const pruned = await pruneVersions({
        store,
        bucket: BUCKET,
        folderName: "tool",
        keep: 1,
        channel: null,
        releaseDates: new Map([["0.2.0", new Date(Date.now() + 60_000)]]),
      });
      expect(pruned).toEqual(["0.1.0"]);
      expect(await keys("tool/")).toEqual(["tool/0.2.0/tool.bin"]);
    });
  });
}
