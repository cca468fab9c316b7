import { text } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDeclaration } from "../../src/releases/declaration.js";
import type { ReleaseProcessor } from "../../src/releases/release-processor.js";
import { readPublished } from "../helpers/published-objects.js";
import { createProcessingHarness, type ProcessingHarness } from "./processing-harness.js";

const declaration = (folder: string, extra = "") => `
storage: {bucket: public, folder_name: ${folder}}
artifacts:
  - {source: app.bin, destination: "app-{version}.bin"}
  - {source: extra.bin, destination: extra.bin}
publish: {prerelease_channel: next${extra}}
`;

describe("the prerelease channel (publish.prerelease_channel)", () => {
  let h: ProcessingHarness;
  let processor: ReleaseProcessor;

  beforeAll(async () => {
    h = await createProcessingHarness();
    processor = h.processor();
  });
  afterAll(() => h.close());

  const read = async (key: string) => {
    const object = await readPublished(h.local, "public", key);
    return object ? text(object.body) : null;
  };
  const manifestOf = async (key: string) => JSON.parse((await read(key)) ?? "null");

  async function repoWithReleases(fullName: string, folder: string, extra = "") {
    const repository = await h.addRepository(fullName);
    const files = { ".delivery.yml": declaration(folder, extra) };
    const assets = (tag: string) => [
      { name: "app.bin", content: `app ${tag}` },
      { name: "extra.bin", content: `extra ${tag}` },
    ];
    h.releases.addRelease(fullName, {
      tag: "v1.0.0",
      createdAt: "2026-01-01T00:00:00.000Z",
      assets: assets("v1.0.0"),
      files,
    });
    h.releases.addRelease(fullName, {
      tag: "v1.1.0-rc.1",
      prerelease: true,
      createdAt: "2026-02-01T00:00:00.000Z",
      assets: assets("v1.1.0-rc.1"),
      files,
    });
    return repository;
  }

  it("publishes the newest prerelease to <folder>/<channel>/ with its own manifest, leaving latest/ alone", async () => {
    const repository = await repoWithReleases("acme/chan", "chan");
    expect((await processor.check(repository, "manual")).result.errors).toEqual([]);
    const rc = await processor.checkTag(repository, "v1.1.0-rc.1", "webhook");

    expect(rc.result.errors).toEqual([]);
    expect(rc.result.skipped).toEqual([]);
    expect(rc.result.processed[0]?.latest_url).toBe(
      "http://delivery.test/files/public/chan/next/app-next.bin",
    );
    expect(await read("chan/1.1.0-rc.1/app-1.1.0-rc.1.bin")).toBe("app v1.1.0-rc.1");
    expect(await read("chan/next/app-next.bin")).toBe("app v1.1.0-rc.1");
    expect(await manifestOf("chan/next/manifest.json")).toMatchObject({
      tag: "v1.1.0-rc.1",
      version: "1.1.0-rc.1",
      prerelease: true,
      channel: "next",
      files: [{ path: "app-next.bin" }, { path: "extra.bin" }],
    });
    expect(await read("chan/next/SHA256SUMS")).toContain("  app-next.bin\n");
    // latest/ still holds the release, with its manifest.
    expect(await read("chan/latest/app-latest.bin")).toBe("app v1.0.0");
    expect(await manifestOf("chan/latest/manifest.json")).toMatchObject({
      tag: "v1.0.0",
      prerelease: false,
      channel: "latest",
    });
  });

  it("keeps the channel on the newest prerelease: an older one goes to its version folder only", async () => {
    const repository = await repoWithReleases("acme/chan-order", "chan-order");
    h.releases.addRelease("acme/chan-order", {
      tag: "v1.1.0-rc.2",
      prerelease: true,
      createdAt: "2026-03-01T00:00:00.000Z",
      assets: [{ name: "app.bin", content: "app rc.2" }],
      files: { ".delivery.yml": declaration("chan-order") },
    });
    const newest = await processor.checkTag(repository, "v1.1.0-rc.2", "webhook");
    // The newest prerelease dropped extra.bin: the channel holds exactly what it declares.
    expect(newest.result.errors).toEqual([
      "artifact extra.bin: no such asset in release v1.1.0-rc.2",
    ]);
    const older = await processor.checkTag(repository, "v1.1.0-rc.1", "webhook");
    expect(older.result.errors).toEqual([]);
    expect(older.result.skipped).toEqual([
      "next/: v1.1.0-rc.1 is not the repository's newest prerelease",
    ]);
    expect(await read("chan-order/next/app-next.bin")).toBe("app rc.2");
    expect(await read("chan-order/1.1.0-rc.1/app-1.1.0-rc.1.bin")).toBe("app v1.1.0-rc.1");
    expect(await manifestOf("chan-order/next/manifest.json")).toMatchObject({ tag: "v1.1.0-rc.2" });
  });

  it("removes from the channel what an earlier prerelease left there", async () => {
    const repository = await repoWithReleases("acme/chan-clean", "chan-clean");
    await processor.checkTag(repository, "v1.1.0-rc.1", "webhook");
    expect(await read("chan-clean/next/extra.bin")).toBe("extra v1.1.0-rc.1");
    const declared = `
storage: {bucket: public, folder_name: chan-clean}
artifacts: [{source: app.bin, destination: "app-{version}.bin"}]
publish: {prerelease_channel: next}
`;
    h.releases.addRelease("acme/chan-clean", {
      tag: "v1.1.0-rc.2",
      prerelease: true,
      createdAt: "2026-03-01T00:00:00.000Z",
      assets: [{ name: "app.bin", content: "app rc.2" }],
      files: { ".delivery.yml": declared },
    });
    const processing = await processor.checkTag(repository, "v1.1.0-rc.2", "webhook");
    expect(processing.result.errors).toEqual([]);
    expect(await h.keys(h.local, "public", "chan-clean/next/", { withManifests: true })).toEqual([
      "chan-clean/next/SHA256SUMS",
      "chan-clean/next/app-next.bin",
      "chan-clean/next/manifest.json",
    ]);
  });

  it("never prunes the channel folder as a version", async () => {
    const repository = await repoWithReleases("acme/chan-prune", "chan-prune", ", max_versions: 1");
    await processor.checkTag(repository, "v1.1.0-rc.1", "webhook");
    const latest = await processor.check(repository, "manual");
    expect(latest.result.errors).toEqual([]);
    const folders = new Set(
      (await h.keys(h.local, "public", "chan-prune/")).map((key) => key.split("/")[1]),
    );
    // max_versions: 1 keeps the newest version folder (the prerelease's, by date), next and latest.
    expect([...folders].sort()).toEqual(["1.1.0-rc.1", "latest", "next"]);
  });

  it("publishes a prerelease to its version folder only without the key (as before)", async () => {
    const repository = await h.addRepository("acme/no-chan");
    h.releases.addRelease("acme/no-chan", {
      tag: "v2.0.0-beta",
      prerelease: true,
      assets: [{ name: "app.bin", content: "beta" }],
      files: {
        ".delivery.yml":
          'storage: {bucket: public}\nartifacts: [{source: app.bin, destination: "app-{version}.bin"}]\n',
      },
    });
    const processing = await processor.checkTag(repository, "v2.0.0-beta", "webhook");
    expect(processing.result.skipped).toEqual([
      "latest/: v2.0.0-beta is not the repository's latest release",
    ]);
    expect(await h.keys(h.local, "public", "no-chan/")).toEqual([
      "no-chan/2.0.0-beta/app-2.0.0-beta.bin",
    ]);
  });

  it.each([
    ["latest", 'must not be "latest", the folder of the latest release (got "latest")'],
    ["Latest", 'must not be "latest", the folder of the latest release (got "Latest")'],
    ["1.2.0", 'must not look like a version (a digit first, or "v" and a digit) (got "1.2.0")'],
    ["v2", 'must not look like a version (a digit first, or "v" and a digit) (got "v2")'],
    ["beta/next", 'must be a single folder name, without "/" (got "beta/next")'],
    ["..", 'must not contain ".." (got "..")'],
  ])("refuses prerelease_channel %s, naming the key", (channel, problem) => {
    const parsed = parseDeclaration(
      `storage: {bucket: files}\npublish: {prerelease_channel: "${channel}"}\n`,
      { folderName: "tool" },
    );
    expect(parsed).toEqual({
      ok: false,
      errors: [`.delivery.yml: publish.prerelease_channel: ${problem}`],
    });
  });

  it("reads a channel name and defaults to none", () => {
    const parse = (text: string) => parseDeclaration(text, { folderName: "tool" });
    const named = parse("storage: {bucket: files}\npublish: {prerelease_channel: next}\n");
    const none = parse("storage: {bucket: files}\n");
    expect(named.ok && named.declaration.publish.prereleaseChannel).toBe("next");
    expect(none.ok && none.declaration.publish.prereleaseChannel).toBeNull();
  });
});
