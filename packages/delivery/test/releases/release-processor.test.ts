import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReleaseProcessor } from "../../src/releases/release-processor.js";
import type { WatchedRepository } from "../../src/repositories/watched-repository-store.js";
import { readPublished } from "../helpers/published-objects.js";
import {
  createProcessingHarness,
  LOCAL_BASE_URL,
  type ProcessingHarness,
} from "./processing-harness.js";
import { buildZip, withRawName } from "./zip-fixture.js";

const LOCAL_DECLARATION = `
version: 2.0
artifacts:
  - source: widget-linux.tar.gz
    destination: bin/widget-{version}-linux.tar.gz
    type: binary
    latest: true
    versioned: true
  - source: site.zip
    destination: site
    type: zip
    latest: true
    versioned: true
docs:
  - source: docs/guide.md
    destination: docs/guide.md
    latest: true
    versioned: true
  - source: CHANGELOG.html
    destination: changelog.html
    latest: true
    versioned: false
storage:
  provider: local
  bucket: public
  folder_name: widget
publish:
  auto_latest: true
  preserve_versions: true
`;

let siteZip: Buffer;

const sha256 = (content: string) => createHash("sha256").update(content).digest("hex");

describe("processing a release", () => {
  let h: ProcessingHarness;
  let processor: ReleaseProcessor;

  beforeAll(async () => {
    h = await createProcessingHarness();
    processor = h.processor();
    siteZip = await buildZip([
      ["index.html", "<h1>Widget</h1>"],
      ["assets/", null],
      ["assets/app.js", "console.log(1)"],
    ]);
  });
  afterAll(() => h.close());

  async function read(key: string, store = h.local, bucket = "public"): Promise<string | null> {
    const object = await readPublished(store, bucket, key);
    return object ? text(object.body) : null;
  }

  async function repoWith(
    fullName: string,
    tag: string,
    declaration: string,
    extra: {
      assets?: Array<{ name: string; content: string | Buffer }>;
      files?: Record<string, string>;
    } = {},
  ): Promise<WatchedRepository> {
    const repository = await h.addRepository(fullName);
    h.releases.addRelease(fullName, {
      tag,
      assets: extra.assets ?? [],
      files: { ".delivery.yml": declaration, ...extra.files },
    });
    return repository;
  }

  it("publishes binaries, zip entries and docs to versioned and latest paths, with the full result", async () => {
    const repository = await repoWith("acme/widget", "v1.4.0", LOCAL_DECLARATION, {
      assets: [
        { name: "widget-linux.tar.gz", content: "linux-binary" },
        { name: "site.zip", content: siteZip },
        { name: "checksums.txt", content: "sums" },
      ],
      files: { "docs/guide.md": "# Guide", "CHANGELOG.html": "<p>changes</p>" },
    });

    const processing = await processor.check(repository, "manual");

    expect(processing.outcome).toBe("published");
    const url = (key: string) => `${LOCAL_BASE_URL}/public/${key}`;
    expect(processing.result).toEqual({
      repository: "acme/widget",
      tag: "v1.4.0",
      processed: [
        {
          file: "widget-linux.tar.gz",
          size: 12,
          sha256: sha256("linux-binary"),
          versioned_url: url("widget/1.4.0/bin/widget-1.4.0-linux.tar.gz"),
          latest_url: url("widget/latest/bin/widget-latest-linux.tar.gz"),
        },
        {
          file: "site.zip/index.html",
          size: 15,
          sha256: sha256("<h1>Widget</h1>"),
          versioned_url: url("widget/1.4.0/site/index.html"),
          latest_url: url("widget/latest/site/index.html"),
        },
        {
          file: "site.zip/assets/app.js",
          size: 14,
          sha256: sha256("console.log(1)"),
          versioned_url: url("widget/1.4.0/site/assets/app.js"),
          latest_url: url("widget/latest/site/assets/app.js"),
        },
        {
          file: "docs/guide.md",
          size: 7,
          sha256: sha256("# Guide"),
          versioned_url: url("widget/1.4.0/docs/guide.md"),
          latest_url: url("widget/latest/docs/guide.md"),
        },
        {
          file: "CHANGELOG.html",
          size: 14,
          sha256: sha256("<p>changes</p>"),
          versioned_url: null,
          latest_url: url("widget/latest/changelog.html"),
        },
      ],
      artifacts: [
        {
          file: "widget-linux.tar.gz",
          destination: "bin/widget-1.4.0-linux.tar.gz",
          type: "binary",
          size: 12,
          latest_url: url("widget/latest/bin/widget-latest-linux.tar.gz"),
        },
        {
          file: "site.zip",
          destination: "site",
          type: "zip",
          size: siteZip.length,
          latest_url: `${url("widget/latest/site")}/`,
        },
      ],
      documentation: [
        {
          type: "md",
          file: "docs/guide.md",
          destination: "docs/guide.md",
          latest_url: url("widget/latest/docs/guide.md"),
        },
        {
          type: "html",
          file: "CHANGELOG.html",
          destination: "changelog.html",
          latest_url: url("widget/latest/changelog.html"),
        },
      ],
      skipped: ["checksums.txt: not declared in .delivery.yml"],
      errors: [],
    });
    expect(await read("widget/1.4.0/bin/widget-1.4.0-linux.tar.gz")).toBe("linux-binary");
    expect(await read("widget/latest/bin/widget-latest-linux.tar.gz")).toBe("linux-binary");
    expect(await read("widget/1.4.0/site/assets/app.js")).toBe("console.log(1)");
    expect(await read("widget/latest/docs/guide.md")).toBe("# Guide");
    expect(await read("widget/1.4.0/changelog.html")).toBeNull();

    if (processing.outcome !== "published") throw new Error("not published");
    expect(processing.record).toMatchObject({
      repository: "acme/widget",
      tag: "v1.4.0",
      name: "v1.4.0",
      status: "success",
      files_count: 5,
      total_bytes: 12 + 15 + 14 + 7 + 14,
      errors: [],
      files: processing.result.processed.map(({ file, size, sha256 }) => ({ file, size, sha256 })),
      trigger: "manual",
    });
    expect(await h.history.find(processing.record.id)).toEqual(processing.record);
  });

  it("publishes many small assets a few at a time, keeping the declaration's order", async () => {
    const names = Array.from({ length: 9 }, (_, n) => `part-${n}.bin`);
    const repository = await repoWith(
      "acme/parts",
      "v1.0.0",
      `storage: {bucket: public}\nartifacts:\n${names.map((name) => `  - {source: ${name}, destination: ${name}}`).join("\n")}\n`,
      { assets: names.map((name) => ({ name, content: `${name} content` })) },
    );
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([]);
    expect(processing.result.artifacts.map((artifact) => artifact.file)).toEqual(names);
    expect(processing.result.processed.map((file) => file.file)).toEqual(names);
    for (const name of names) expect(await read(`parts/1.0.0/${name}`)).toBe(`${name} content`);
  });

  it("skips a release already processed, without downloading anything", async () => {
    const repository = await repoWith(
      "acme/skip",
      "v1.0.0",
      "storage: {bucket: public}\nartifacts: [{source: a.bin, destination: a.bin}]\n",
      { assets: [{ name: "a.bin", content: "a" }] },
    );
    expect((await processor.check(repository, "scheduler")).outcome).toBe("published");
    const downloads = h.releases.state.signedUrls.length;
    const again = await processor.check(repository, "scheduler");
    expect(again.outcome).toBe("already_processed");
    expect(again.result).toEqual({
      repository: "acme/skip",
      tag: "v1.0.0",
      processed: [],
      artifacts: [],
      documentation: [],
      skipped: ["v1.0.0: already processed"],
      errors: [],
    });
    expect(h.releases.state.signedUrls.length).toBe(downloads);
  });

  it("reprocesses the latest release or a named tag, replacing the record", async () => {
    const repository = await repoWith(
      "acme/again",
      "v1.0.0",
      "storage: {bucket: public}\nartifacts: [{source: a.bin, destination: a.bin}]\n",
      { assets: [{ name: "a.bin", content: "first" }] },
    );
    h.releases.addRelease("acme/again", {
      tag: "v2.0.0",
      assets: [{ name: "a.bin", content: "second" }],
      files: {
        ".delivery.yml":
          "storage: {bucket: public}\nartifacts: [{source: a.bin, destination: a.bin}]\n",
      },
    });
    await processor.check(repository, "manual");
    const latest = await processor.reprocess(repository);
    expect(latest.outcome).toBe("published");
    expect(latest.result.tag).toBe("v2.0.0");
    const old = await processor.reprocess(repository, "v1.0.0");
    expect(old.outcome === "published" && old.record.trigger).toBe("reprocess");
    expect(await read("again/1.0.0/a.bin")).toBe("first");
    // latest/ stays with the newest release.
    expect(await read("again/latest/a.bin")).toBe("second");
    expect(old.result.skipped).toEqual(["latest/: v1.0.0 is not the repository's latest release"]);
    expect(old.result.processed[0]?.latest_url).toBeNull();
    const { history } = await h.history.list({ limit: 10, repositoryId: repository.id });
    expect(history.map((record) => [record.tag, record.trigger])).toEqual([
      ["v1.0.0", "reprocess"],
      ["v2.0.0", "reprocess"],
    ]);
    await expect(processor.reprocess(repository, "v9.9.9")).rejects.toMatchObject({
      code: "release_not_found",
    });
  });

  it("publishes an older tag or a prerelease to its version folder only, leaving latest/ alone", async () => {
    const declaration =
      "storage: {bucket: public}\nartifacts: [{source: a.bin, destination: a.bin}]\ndocs: [{source: NOTES.md, destination: NOTES.md, versioned: false}]\n";
    const repository = await h.addRepository("acme/backport");
    for (const [tag, prerelease, day] of [
      // The code host's latest is the newest non-prerelease by creation date: v2.0.0.
      ["v2.0.0", false, 2],
      ["v1.9.1", false, 1],
      ["v3.0.0-rc1", true, 3],
    ] as const) {
      h.releases.addRelease("acme/backport", {
        tag,
        prerelease,
        createdAt: new Date(Date.UTC(2026, 3, day)).toISOString(),
        assets: [{ name: "a.bin", content: tag }],
        files: { ".delivery.yml": declaration, "NOTES.md": `notes ${tag}` },
      });
    }
    await processor.checkTag(repository, "v2.0.0", "webhook");
    const backport = await processor.checkTag(repository, "v1.9.1", "webhook");
    const rc = await processor.checkTag(repository, "v3.0.0-rc1", "webhook");
    expect(await h.keys(h.local, "public", "backport/")).toEqual([
      "backport/1.9.1/a.bin",
      "backport/2.0.0/a.bin",
      "backport/3.0.0-rc1/a.bin",
      "backport/latest/NOTES.md",
      "backport/latest/a.bin",
    ]);
    expect(await read("backport/latest/a.bin")).toBe("v2.0.0");
    expect(await read("backport/latest/NOTES.md")).toBe("notes v2.0.0");
    for (const processing of [backport, rc]) {
      expect(processing.result.errors).toEqual([]);
      expect(processing.result.documentation).toEqual([]);
      expect(processing.result.skipped).toEqual([
        `latest/: ${processing.result.tag} is not the repository's latest release`,
      ]);
    }
  });

  it("leaves in latest/ only what the latest release published", async () => {
    const repository = await h.addRepository("acme/moving");
    const zipV1 = await buildZip([
      ["index.html", "v1"],
      ["old-page.html", "gone in v2"],
    ]);
    const zipV2 = await buildZip([["index.html", "v2"]]);
    for (const [tag, day, declaration, assets] of [
      [
        "v1.0.0",
        1,
        "artifacts: [{source: site.zip, destination: site, type: zip}, {source: old.bin, destination: old.bin}]",
        [
          { name: "site.zip", content: zipV1 },
          { name: "old.bin", content: "old" },
        ],
      ],
      [
        "v2.0.0",
        2,
        "artifacts: [{source: site.zip, destination: site, type: zip}]",
        [{ name: "site.zip", content: zipV2 }],
      ],
    ] as const) {
      h.releases.addRelease("acme/moving", {
        tag,
        createdAt: new Date(Date.UTC(2026, 4, day)).toISOString(),
        assets: [...assets],
        files: { ".delivery.yml": `storage: {bucket: public}\n${declaration}\n` },
      });
      await processor.checkTag(repository, tag, "webhook");
    }
    expect(await h.keys(h.local, "public", "moving/")).toEqual([
      "moving/1.0.0/old.bin",
      "moving/1.0.0/site/index.html",
      "moving/1.0.0/site/old-page.html",
      "moving/2.0.0/site/index.html",
      "moving/latest/site/index.html",
    ]);
    expect(await read("moving/latest/site/index.html")).toBe("v2");
  });

  it("marks a release partial when a declared asset or doc is missing, and does not retry it", async () => {
    const repository = await repoWith(
      "acme/partial",
      "v1.0.0",
      `storage: {bucket: public}
artifacts:
  - {source: present.bin, destination: present.bin}
  - {source: absent.bin, destination: absent.bin}
docs:
  - {source: docs/missing.md, destination: missing.md}
`,
      { assets: [{ name: "present.bin", content: "here" }] },
    );
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([
      "artifact absent.bin: no such asset in release v1.0.0",
      "doc docs/missing.md: not found in the repository at v1.0.0",
    ]);
    expect(processing.outcome === "published" && processing.record.status).toBe("partial");
    expect(await read("partial/1.0.0/present.bin")).toBe("here");
    expect((await processor.check(repository, "scheduler")).outcome).toBe("already_processed");
  });

  it("fails a release whose download keeps failing, then publishes it on the next check", async () => {
    const repository = await repoWith(
      "acme/flaky",
      "v1.0.0",
      "storage: {bucket: public}\nartifacts: [{source: a.bin, destination: a.bin}]\n",
      { assets: [{ name: "a.bin", content: "finally" }] },
    );
    h.releases.state.failSignedDownloads = 3; // every attempt of this check
    const failed = await processor.check(repository, "scheduler");
    expect(failed.outcome === "published" && failed.record.status).toBe("failed");
    expect(failed.result.errors).toEqual(["artifact a.bin: The asset download answered 500"]);
    expect(await read("flaky/1.0.0/a.bin")).toBeNull();

    const retried = await processor.check(repository, "scheduler");
    expect(retried.outcome === "published" && retried.record.status).toBe("success");
    expect(await read("flaky/1.0.0/a.bin")).toBe("finally");
    const { history } = await h.history.list({ limit: 10, repositoryId: repository.id });
    expect(history).toHaveLength(1);
    expect(history[0]?.status).toBe("success");
  });

  it("retries a download cut mid-stream with a fresh signed URL", async () => {
    const repository = await repoWith(
      "acme/cut",
      "v1.0.0",
      "storage: {bucket: public}\nartifacts: [{source: a.bin, destination: a.bin}]\n",
      { assets: [{ name: "a.bin", content: "0123456789".repeat(1000) }] },
    );
    const before = h.releases.state.signedUrls.length;
    h.releases.state.cutNextDownloadAfter = 100;
    const processing = await processor.check(repository, "manual");
    expect(processing.outcome === "published" && processing.record.status).toBe("success");
    expect(await read("cut/1.0.0/a.bin")).toBe("0123456789".repeat(1000));
    const urls = h.releases.state.signedUrls.slice(before);
    expect(urls).toHaveLength(2);
    expect(urls[0]).not.toBe(urls[1]);
  });

  it("refuses zip-slip entries, reports them and writes nothing outside the destination", async () => {
    const zip = withRawName(
      await buildZip([
        ["ok.txt", "ok"],
        ["XXXXXXXXXXXXXXXXXXXXXXX", "evil"],
      ]),
      "XXXXXXXXXXXXXXXXXXXXXXX",
      "../../../../escaped.txt",
    );
    const repository = await repoWith(
      "acme/slip",
      "v1.0.0",
      "storage: {bucket: public}\nartifacts: [{source: bundle.zip, destination: bundle, type: zip}]\n",
      { assets: [{ name: "bundle.zip", content: zip }] },
    );
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([
      'artifact bundle.zip: zip entry "../../../../escaped.txt" refused: ".." path segment',
    ]);
    expect(processing.outcome === "published" && processing.record.status).toBe("partial");
    expect(await h.keys(h.local, "public", "slip/")).toEqual([
      "slip/1.0.0/bundle/ok.txt",
      "slip/latest/bundle/ok.txt",
    ]);
    expect(await h.keys(h.local, "public", "escaped")).toEqual([]);
  });

  it("publishes a zip whose destination ends in / under that folder", async () => {
    const repository = await repoWith(
      "acme/slashed",
      "v1.0.0",
      "storage: {bucket: public}\nartifacts: [{source: site.zip, destination: site/, type: zip}]\n",
      { assets: [{ name: "site.zip", content: siteZip }] },
    );
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([]);
    expect(processing.outcome === "published" && processing.record.status).toBe("success");
    expect(processing.result.artifacts).toEqual([
      expect.objectContaining({
        destination: "site",
        latest_url: `${LOCAL_BASE_URL}/public/slashed/latest/site/`,
      }),
    ]);
    expect(await h.keys(h.local, "public", "slashed/1.0.0/")).toEqual([
      "slashed/1.0.0/site/assets/app.js",
      "slashed/1.0.0/site/index.html",
    ]);
  });

  it("publishes nothing when the declaration has a path escaping its folder", async () => {
    const repository = await repoWith(
      "acme/escape",
      "v1.0.0",
      "storage: {bucket: public}\nartifacts: [{source: a.bin, destination: ../../a.bin}]\n",
      { assets: [{ name: "a.bin", content: "a" }] },
    );
    const downloads = h.releases.state.signedUrls.length;
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([
      '.delivery.yml: artifacts[0].destination: must not contain ".." (got "../../a.bin")',
    ]);
    expect(processing.outcome === "published" && processing.record.status).toBe("failed");
    expect(await h.keys(h.local, "public", "escape/")).toEqual([]);
    expect(h.releases.state.signedUrls.length).toBe(downloads);
  });

  it("checks every destination and the bucket before the first download", async () => {
    const repository = await repoWith(
      "acme/badkey",
      "v1.0.0",
      "storage: {bucket: public}\nartifacts:\n  - {source: a.bin, destination: a.bin}\n  - {source: b.bin, destination: 'b//c.bin'}\n",
      {
        assets: [
          { name: "a.bin", content: "a" },
          { name: "b.bin", content: "b" },
        ],
      },
    );
    const downloads = h.releases.state.signedUrls.length;
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([
      '.delivery.yml: artifacts[1].destination: must not contain an empty path segment ("//" or a trailing "/") (got "b//c.bin")',
    ]);
    expect(h.releases.state.signedUrls.length).toBe(downloads);
    expect(await h.keys(h.local, "public", "badkey/")).toEqual([]);

    const badBucket = await repoWith("acme/badbucket", "v1.0.0", "storage: {bucket: Bad_Bucket}\n");
    expect((await processor.check(badBucket, "manual")).result.errors).toEqual([
      '.delivery.yml: storage.bucket: "Bad_Bucket" is not a valid bucket name (3-63 of a-z, 0-9, ".", "-")',
    ]);
  });

  it("refuses a declaration larger than its limit", async () => {
    const repository = await repoWith(
      "acme/huge",
      "v1.0.0",
      `storage: {bucket: public}\n# ${"x".repeat(300 * 1024)}\n`,
    );
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([".delivery.yml: larger than 262144 bytes"]);
  });

  it("fails a release without a .delivery.yml", async () => {
    const repository = await h.addRepository("acme/undeclared");
    h.releases.addRelease("acme/undeclared", { tag: "v1.0.0" });
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([
      ".delivery.yml: not found in the repository at v1.0.0",
    ]);
    expect(processing.outcome === "published" && processing.record.status).toBe("failed");
  });

  it("answers no_release for a repository without releases", async () => {
    const repository = await h.addRepository("acme/empty");
    await expect(processor.check(repository, "manual")).rejects.toMatchObject({
      code: "no_release",
    });
  });

  it("publishes to the S3-compatible object store with delivery_url and content types", async () => {
    const repository = await repoWith(
      "acme/cloud",
      "2026.1",
      `storage:
  provider: objectstore
  bucket: downloads
  folder_name: cloud-app
  delivery_url: https://dl.example.test
artifacts:
  - {source: app.bin, destination: 'app-{version}.bin'}
  - {source: web.zip, destination: web, type: zip, latest: false}
docs:
  - {source: README.md, destination: README.md}
`,
      {
        assets: [
          { name: "app.bin", content: "cloud-binary" },
          { name: "web.zip", content: siteZip },
        ],
        files: { "README.md": "# Cloud" },
      },
    );
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([]);
    expect(processing.result.artifacts[0]?.latest_url).toBe(
      "https://dl.example.test/cloud-app/latest/app-latest.bin",
    );
    expect(await h.keys(h.objectstore, "downloads", "cloud-app/")).toEqual([
      "cloud-app/2026.1/README.md",
      "cloud-app/2026.1/app-2026.1.bin",
      "cloud-app/2026.1/web/assets/app.js",
      "cloud-app/2026.1/web/index.html",
      "cloud-app/latest/README.md",
      "cloud-app/latest/app-latest.bin",
    ]);
    const readme = await readPublished(h.objectstore, "downloads", "cloud-app/2026.1/README.md");
    expect(readme?.contentType).toBe("text/markdown; charset=utf-8");
    expect(await text(readme?.body as Readable)).toBe("# Cloud");
    const html = await readPublished(h.objectstore, "downloads", "cloud-app/2026.1/web/index.html");
    expect(html?.contentType).toBe("text/html; charset=utf-8");
  });

  it("fails when the declared provider is not configured", async () => {
    const repository = await repoWith(
      "acme/nostore",
      "v1.0.0",
      "storage: {provider: objectstore, bucket: nowhere}\n",
    );
    const unconfigured = h.processor({ storage: { ...h.storage, objectstore: null } });
    const processing = await unconfigured.check(repository, "manual");
    expect(processing.result.errors).toEqual([
      "storage.provider objectstore is not configured on this service (OBJECTSTORE_ENDPOINT)",
    ]);
  });

  it("keeps only max_versions versioned folders, by release date, and the latest folder", async () => {
    const declaration =
      "storage: {bucket: public}\npublish: {max_versions: 2}\nartifacts: [{source: a.bin, destination: a.bin}]\n";
    const repository = await h.addRepository("acme/pruned");
    const tags = ["v1.0.0", "v1.1.0", "v1.2.0", "v1.3.0"];
    for (const [index, tag] of tags.entries()) {
      h.releases.addRelease("acme/pruned", {
        tag,
        createdAt: new Date(Date.UTC(2026, 1, 1 + index)).toISOString(),
        assets: [{ name: "a.bin", content: tag }],
        files: { ".delivery.yml": declaration },
      });
      const processing = await processor.checkTag(repository, tag, "webhook");
      expect(processing.outcome === "published" && processing.record.status).toBe("success");
    }
    expect(await h.keys(h.local, "public", "pruned/")).toEqual([
      "pruned/1.2.0/a.bin",
      "pruned/1.3.0/a.bin",
      "pruned/latest/a.bin",
    ]);
    expect(await read("pruned/latest/a.bin")).toBe("v1.3.0");
  });

  it("keeps only the current version when preserve_versions is false", async () => {
    const declaration =
      "storage: {bucket: public}\npublish: {preserve_versions: false}\nartifacts: [{source: a.bin, destination: a.bin}]\n";
    const repository = await h.addRepository("acme/single");
    for (const [index, tag] of ["v1.0.0", "v2.0.0"].entries()) {
      h.releases.addRelease("acme/single", {
        tag,
        createdAt: new Date(Date.UTC(2026, 2, 1 + index)).toISOString(),
        assets: [{ name: "a.bin", content: tag }],
        files: { ".delivery.yml": declaration },
      });
      await processor.checkTag(repository, tag, "manual");
    }
    expect(await h.keys(h.local, "public", "single/")).toEqual([
      "single/2.0.0/a.bin",
      "single/latest/a.bin",
    ]);
  });

  it("lists every release for a dry run without processing", async () => {
    const repository = await repoWith("acme/listing", "v1.0.0", "storage: {bucket: public}\n", {
      assets: [{ name: "a.bin", content: "abc" }],
    });
    h.releases.addRelease("acme/listing", { tag: "v2.0.0-beta", prerelease: true });
    const listing = await processor.dryRun(repository);
    expect(listing.repository).toBe("acme/listing");
    expect(listing.total_releases).toBe(2);
    expect(
      listing.releases.map((release) => [release.tag, release.prerelease, release.assets_count]),
    ).toEqual([
      ["v2.0.0-beta", true, 0],
      ["v1.0.0", false, 1],
    ]);
    expect(listing.releases[1]?.assets).toEqual([
      {
        name: "a.bin",
        size: 3,
        download_url: "https://codehost.test/acme/listing/releases/download/v1.0.0/a.bin",
      },
    ]);
    expect(await h.history.list({ limit: 100, repositoryId: repository.id })).toEqual({
      history: [],
      total: 0,
    });
  });
});
