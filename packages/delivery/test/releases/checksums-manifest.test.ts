import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { dirname } from "node:path";
import { text } from "node:stream/consumers";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDeclaration } from "../../src/releases/declaration.js";
import { checksumLines } from "../../src/releases/release-manifest.js";
import type { ObjectStore } from "../../src/storage/object-store.js";
import { readPublished } from "../helpers/published-objects.js";
import {
  createProcessingHarness,
  LOCAL_BASE_URL,
  type ProcessingHarness,
} from "./processing-harness.js";
import { buildZip } from "./zip-fixture.js";

const run = promisify(execFile);
const sha256 = (content: string | Buffer) => createHash("sha256").update(content).digest("hex");

const declaration = (provider: string, bucket: string, folder: string) => `
storage: {provider: ${provider}, bucket: ${bucket}, folder_name: ${folder}}
artifacts:
  - {source: tool-linux, destination: "bin/tool-{version}-linux"}
  - {source: site.zip, destination: site, type: zip}
docs:
  - {source: README.md, destination: README.md, latest: false}
`;

describe("checksums and manifests of a publication", () => {
  let h: ProcessingHarness;
  let site: Buffer;

  beforeAll(async () => {
    h = await createProcessingHarness();
    site = await buildZip([
      ["index.html", "<h1>Tool</h1>"],
      ["css/site.css", "body{}"],
    ]);
  });
  afterAll(() => h.close());

  async function read(store: ObjectStore, bucket: string, key: string): Promise<string | null> {
    const object = await readPublished(store, bucket, key);
    return object ? text(object.body) : null;
  }

  async function publish(fullName: string, provider: "local" | "objectstore", bucket: string) {
    const folder = fullName.split("/")[1] as string;
    const repository = await h.addRepository(fullName);
    h.releases.addRelease(fullName, {
      tag: "v2.0.0",
      createdAt: "2026-03-01T10:00:00.000Z",
      assets: [
        { name: "tool-linux", content: "linux tool bytes" },
        { name: "site.zip", content: site },
      ],
      files: { ".delivery.yml": declaration(provider, bucket, folder), "README.md": "# Tool" },
    });
    const processing = await h.processor().check(repository, "manual");
    expect(processing.result.errors).toEqual([]);
    return { folder, processing };
  }

  for (const provider of ["local", "objectstore"] as const) {
    it(`writes SHA256SUMS and manifest.json in the version folder and latest/ (${provider})`, async () => {
      const bucket = provider === "local" ? "public" : "downloads";
      const store = provider === "local" ? h.local : h.objectstore;
      const { folder, processing } = await publish(`acme/sums-${provider}`, provider, bucket);
      const base =
        provider === "local" ? `${LOCAL_BASE_URL}/${bucket}` : `${h.s3.endpoint}/${bucket}`;

      // Every file of the result carries the checksum of the bytes published.
      const expected: Record<string, string> = {
        "tool-linux": sha256("linux tool bytes"),
        "site.zip/index.html": sha256("<h1>Tool</h1>"),
        "site.zip/css/site.css": sha256("body{}"),
        "README.md": sha256("# Tool"),
      };
      expect(
        Object.fromEntries(processing.result.processed.map((file) => [file.file, file.sha256])),
      ).toEqual(expected);
      if (processing.outcome !== "published") throw new Error("not published");
      expect(processing.record.files).toEqual(
        processing.result.processed.map(({ file, size, sha256 }) => ({ file, size, sha256 })),
      );
      expect((await h.history.find(processing.record.id))?.files).toEqual(processing.record.files);

      expect(await read(store, bucket, `${folder}/2.0.0/SHA256SUMS`)).toBe(
        [
          `${sha256("# Tool")}  README.md`,
          `${sha256("linux tool bytes")}  bin/tool-2.0.0-linux`,
          `${sha256("body{}")}  site/css/site.css`,
          `${sha256("<h1>Tool</h1>")}  site/index.html`,
          "",
        ].join("\n"),
      );
      // latest/ lists what it holds: the README is not published there.
      expect(await read(store, bucket, `${folder}/latest/SHA256SUMS`)).toBe(
        [
          `${sha256("linux tool bytes")}  bin/tool-latest-linux`,
          `${sha256("body{}")}  site/css/site.css`,
          `${sha256("<h1>Tool</h1>")}  site/index.html`,
          "",
        ].join("\n"),
      );
      const manifest = JSON.parse(
        (await read(store, bucket, `${folder}/2.0.0/manifest.json`)) ?? "",
      );
      expect(manifest).toEqual({
        repository: `acme/sums-${provider}`,
        tag: "v2.0.0",
        version: "2.0.0",
        prerelease: false,
        channel: null,
        published_at: "2026-03-01T10:00:00.000Z",
        files: [
          {
            path: "README.md",
            size: 6,
            sha256: sha256("# Tool"),
            content_type: "text/markdown; charset=utf-8",
            url: `${base}/${folder}/2.0.0/README.md`,
          },
          {
            path: "bin/tool-2.0.0-linux",
            size: 16,
            sha256: sha256("linux tool bytes"),
            content_type: "application/octet-stream",
            url: `${base}/${folder}/2.0.0/bin/tool-2.0.0-linux`,
          },
          {
            path: "site/css/site.css",
            size: 6,
            sha256: sha256("body{}"),
            content_type: "text/css; charset=utf-8",
            url: `${base}/${folder}/2.0.0/site/css/site.css`,
          },
          {
            path: "site/index.html",
            size: 13,
            sha256: sha256("<h1>Tool</h1>"),
            content_type: "text/html; charset=utf-8",
            url: `${base}/${folder}/2.0.0/site/index.html`,
          },
        ],
      });
      const latest = JSON.parse(
        (await read(store, bucket, `${folder}/latest/manifest.json`)) ?? "",
      );
      expect(latest).toMatchObject({ tag: "v2.0.0", version: "2.0.0", channel: "latest" });
      expect(latest.files.map((file: { path: string }) => file.path)).toEqual([
        "bin/tool-latest-linux",
        "site/css/site.css",
        "site/index.html",
      ]);
    });
  }

  it("verifies with sha256sum -c in the published folder", async () => {
    const { folder } = await publish("acme/sums-verified", "local", "public");
    for (const version of ["2.0.0", "latest"]) {
      const sums = h.local.pathOf("public", `${folder}/${version}/SHA256SUMS`);
      const { stdout } = await run("sha256sum", ["-c", "--strict", "SHA256SUMS"], {
        cwd: dirname(sums),
      });
      expect(stdout).toContain(`bin/tool-${version}-linux: OK`);
      expect(stdout).toContain("site/index.html: OK");
    }
  });

  it("keeps the checksums and manifest of latest/ while removing what an older release left", async () => {
    const { folder } = await publish("acme/sums-kept", "local", "public");
    // The cleanup of latest/ after a complete publish runs after the manifests are written.
    const keys = await h.keys(h.local, "public", `${folder}/latest/`, { withManifests: true });
    expect(keys).toContain(`${folder}/latest/SHA256SUMS`);
    expect(keys).toContain(`${folder}/latest/manifest.json`);
  });

  it("escapes a file name with a newline the way sha256sum does", () => {
    expect(checksumLines([{ path: "a\nb", sha256: "00" }])).toBe("\\00  a\\nb\n");
    expect(checksumLines([{ path: "plain.txt", sha256: "ff" }])).toBe("ff  plain.txt\n");
  });

  it.each([
    ["artifacts", "SHA256SUMS"],
    ["artifacts", "manifest.json"],
    ["artifacts", "sha256sums.sig"],
    ["docs", "Manifest.JSON"],
    ["artifacts", "SHA256SUMS/inner.bin"],
  ])("refuses the reserved name %s[0].destination: %s", (list, destination) => {
    const text = `storage: {bucket: files}\n${list}: [{source: a.bin, destination: "${destination}"}]\n`;
    const parsed = parseDeclaration(text, { folderName: "tool" });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors).toEqual([
      `.delivery.yml: ${list}[0].destination: ${JSON.stringify(destination)} is reserved: SHA256SUMS, SHA256SUMS.sig, manifest.json are the checksums and manifest the service writes in each folder`,
    ]);
  });

  it("accepts a reserved name deeper in a destination", () => {
    const text =
      "storage: {bucket: files}\nartifacts: [{source: a, destination: docs/manifest.json}]\n";
    expect(parseDeclaration(text, { folderName: "tool" }).ok).toBe(true);
  });
});
