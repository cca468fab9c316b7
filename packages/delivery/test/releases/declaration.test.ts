import { describe, expect, it } from "vitest";
import { parseDeclaration } from "../../src/releases/declaration.js";

const DEFAULTS = { folderName: "widget" };

const FULL = `
version: 2.0
artifacts:
  - source: widget-linux.tar.gz
    destination: bin/widget-{version}.tar.gz
    type: binary
    latest: true
    versioned: true
  - source: site.zip
    destination: site
    type: zip
    latest: false
    versioned: true
docs:
  - source: docs/guide.md
    destination: docs/guide.md
    latest: true
    versioned: false
storage:
  provider: objectstore
  bucket: downloads
  folder_name: widget-app
  delivery_url: https://cdn.example.test/downloads/
publish:
  auto_latest: true
  preserve_versions: true
  max_versions: 3
  prerelease_channel: next
`;

function errorsOf(text: string): readonly string[] {
  const result = parseDeclaration(text, DEFAULTS);
  return result.ok ? [] : result.errors;
}

describe("the .delivery.yml declaration", () => {
  it("reads every documented field", () => {
    const result = parseDeclaration(FULL, DEFAULTS);
    expect(result).toEqual({
      ok: true,
      declaration: {
        version: 2,
        artifacts: [
          {
            source: "widget-linux.tar.gz",
            destination: "bin/widget-{version}.tar.gz",
            type: "binary",
            latest: true,
            versioned: true,
          },
          { source: "site.zip", destination: "site", type: "zip", latest: false, versioned: true },
        ],
        docs: [
          { source: "docs/guide.md", destination: "docs/guide.md", latest: true, versioned: false },
        ],
        storage: {
          provider: "objectstore",
          bucket: "downloads",
          folderName: "widget-app",
          deliveryUrl: "https://cdn.example.test/downloads",
        },
        publish: {
          autoLatest: true,
          preserveVersions: true,
          maxVersions: 3,
          prereleaseChannel: "next",
        },
      },
    });
  });

  it("fills the defaults: local storage, the repository's folder, binary, versioned, latest from auto_latest", () => {
    const result = parseDeclaration(
      "storage:\n  bucket: files\nartifacts:\n  - source: a.bin\n    destination: a.bin\n",
      DEFAULTS,
    );
    expect(result.ok && result.declaration).toMatchObject({
      version: 2,
      artifacts: [{ type: "binary", latest: true, versioned: true }],
      docs: [],
      storage: { provider: "local", bucket: "files", folderName: "widget", deliveryUrl: null },
      publish: { autoLatest: true, preserveVersions: true, maxVersions: null },
    });
  });

  it("does not publish to latest by default when auto_latest is false", () => {
    const result = parseDeclaration(
      "storage: {bucket: files}\npublish: {auto_latest: false}\nartifacts: [{source: a, destination: a}]\n",
      DEFAULTS,
    );
    expect(result.ok && result.declaration.artifacts[0]).toMatchObject({
      latest: false,
      versioned: true,
    });
  });

  it("names the path and the problem of each wrong key", () => {
    const errors = errorsOf(`
version: 2
artifacts:
  - source: a.bin
    destination: a.bin
    type: tarball
    latst: true
  - destination: b.bin
storage:
  provider: dropbox
  bucket: files
  delivery_url: ftp://files.example.test
publish:
  max_versions: 0
  auto_latest: "yes"
`);
    expect(errors).toEqual(
      expect.arrayContaining([
        ".delivery.yml: artifacts[0].latst: unknown key",
        '.delivery.yml: artifacts[0].type: must be one of "binary", "zip" (got "tarball")',
        ".delivery.yml: artifacts[1].source: required key missing",
        '.delivery.yml: storage.provider: must be one of "objectstore", "local" (got "dropbox")',
        ".delivery.yml: storage.delivery_url: must be an http:// or https:// URL",
        ".delivery.yml: publish.max_versions: expected integer to be greater or equal to 1 (got 0)",
        '.delivery.yml: publish.auto_latest: expected boolean (got "yes")',
      ]),
    );
    expect(errors).toHaveLength(7);
  });

  it("requires the storage section and its bucket", () => {
    expect(errorsOf("artifacts: []\n")).toEqual([".delivery.yml: storage: required key missing"]);
    expect(errorsOf("storage: {provider: local}\n")).toEqual([
      ".delivery.yml: storage.bucket: required key missing",
    ]);
  });

  it("refuses an unsupported declaration version", () => {
    expect(errorsOf("version: 3\nstorage: {bucket: files}\n")).toEqual([
      ".delivery.yml: version: unsupported version 3 (expected 2.x)",
    ]);
  });

  it.each([
    ["artifacts[0].destination", "artifacts: [{source: a.bin, destination: ../escape.bin}]"],
    ["artifacts[0].destination", "artifacts: [{source: a.bin, destination: /etc/a.bin}]"],
    ["artifacts[0].source", "artifacts: [{source: ../../secret, destination: a.bin}]"],
    ["docs[0].source", "docs: [{source: /etc/passwd, destination: passwd}]"],
    ["docs[0].destination", "docs: [{source: README.md, destination: 'docs/../../x.md'}]"],
    ["docs[0].destination", "docs: [{source: README.md, destination: 'docs\\..\\x.md'}]"],
    ["storage.folder_name", "storage: {bucket: files, folder_name: ../other}"],
  ])("refuses %s when it escapes its folder", (path, yaml) => {
    const text = yaml.startsWith("storage") ? yaml : `storage: {bucket: files}\n${yaml}\n`;
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      new RegExp(`^\\.delivery\\.yml: ${path.replace(/[[\]]/g, "\\$&")}: must not`),
    );
  });

  it.each([
    ["site/", "site"],
    ["site//", "site"],
    ["web/site/", "web/site"],
    ["{version}/site/", "{version}/site"],
  ])("reads the zip destination %s as the folder %s", (destination, folder) => {
    const result = parseDeclaration(
      `storage: {bucket: files}\nartifacts: [{source: site.zip, destination: '${destination}', type: zip}]\n`,
      DEFAULTS,
    );
    expect(result.ok && result.declaration.artifacts[0]?.destination).toBe(folder);
  });

  it.each([
    ["artifacts[0].destination", "artifacts: [{source: a.bin, destination: 'bin/'}]", "empty"],
    [
      "artifacts[0].destination",
      "artifacts: [{source: a.bin, destination: 'bin//a.bin'}]",
      "empty",
    ],
    [
      "artifacts[0].destination",
      "artifacts: [{source: a.zip, destination: 'a//b', type: zip}]",
      "empty",
    ],
    ["artifacts[0].destination", "artifacts: [{source: a.bin, destination: './a.bin'}]", '"."'],
    [
      "artifacts[0].destination",
      "artifacts: [{source: a.zip, destination: 'site/./x/', type: zip}]",
      '"."',
    ],
    [
      "artifacts[0].destination",
      "artifacts: [{source: a.zip, destination: '.', type: zip}]",
      '"."',
    ],
    ["docs[0].destination", "docs: [{source: README.md, destination: 'docs/'}]", "empty"],
    ["docs[0].destination", "docs: [{source: README.md, destination: 'docs/./README.md'}]", '"."'],
    ["storage.folder_name", "storage: {bucket: files, folder_name: .}", '"."'],
    ["storage.folder_name", "storage: {bucket: files, folder_name: 'good/'}", "single folder"],
    ["storage.folder_name", "storage: {bucket: files, folder_name: good/latest}", "single folder"],
  ])(
    'refuses %s when it has an empty or "." segment or nests folders (%s)',
    (path, yaml, problem) => {
      const text = yaml.startsWith("storage") ? yaml : `storage: {bucket: files}\n${yaml}\n`;
      const errors = errorsOf(text);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(
        new RegExp(`^\\.delivery\\.yml: ${path.replace(/[[\]]/g, "\\$&")}: must .*${problem}`),
      );
    },
  );

  it("refuses a rule that publishes nowhere", () => {
    expect(
      errorsOf(
        "storage: {bucket: files}\nartifacts: [{source: a, destination: a, latest: false, versioned: false}]\n",
      ),
    ).toEqual([
      ".delivery.yml: artifacts[0]: publishes nowhere: latest and versioned are both false",
    ]);
  });

  it("reports invalid YAML with its line", () => {
    const errors = errorsOf("storage:\n  bucket: [unclosed\n");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^\.delivery\.yml: invalid YAML: .+ at line 3, column 1$/);
  });

  it("refuses a file that is not a mapping", () => {
    expect(errorsOf("- just\n- a list\n")).toEqual([
      ".delivery.yml: expected a mapping of keys (version, artifacts, docs, storage, publish)",
    ]);
  });
});
