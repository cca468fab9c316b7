import { execFile } from "node:child_process";
import { createPrivateKey } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { ConfigError } from "@rd/common";
import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { ObjectStore } from "../../src/storage/object-store.js";
import { readPublished } from "../helpers/published-objects.js";
import { runDelivery } from "../process/delivery-process.js";
import { createProcessingHarness, type ProcessingHarness } from "./processing-harness.js";

const run = promisify(execFile);

/** The README's verification command, run word for word in the folder of the downloads. */
const VERIFY =
  "openssl pkeyutl -verify -pubin -inkey release-signing.pub.pem -rawin -in SHA256SUMS -sigfile SHA256SUMS.sig";

const DECLARATION = (provider: string, bucket: string, folder: string) =>
  `storage: {provider: ${provider}, bucket: ${bucket}, folder_name: ${folder}}\n` +
  "artifacts: [{source: app.bin, destination: app.bin}]\n";

describe("signed checksums (RELEASE_SIGNING_KEY)", () => {
  let h: ProcessingHarness;
  let dir: { path: string; remove(): Promise<void> };
  let pem: string;

  beforeAll(async () => {
    h = await createProcessingHarness();
    dir = await makeTempDir("rd-signing-");
    // The key pair as the README makes it, with the stock tool.
    await run("openssl", ["genpkey", "-algorithm", "ed25519", "-out", "release-signing.pem"], {
      cwd: dir.path,
    });
    await run(
      "openssl",
      ["pkey", "-in", "release-signing.pem", "-pubout", "-out", "release-signing.pub.pem"],
      { cwd: dir.path },
    );
    pem = await readFile(join(dir.path, "release-signing.pem"), "utf8");
  });
  afterAll(async () => {
    await h.close();
    await dir.remove();
  });

  /** Downloads a published folder's SHA256SUMS and signature beside the public key. */
  async function download(store: ObjectStore, bucket: string, folder: string): Promise<void> {
    for (const name of ["SHA256SUMS", "SHA256SUMS.sig"]) {
      const object = await readPublished(store, bucket, `${folder}/${name}`);
      if (!object) throw new Error(`${folder}/${name} was not published`);
      const chunks: Buffer[] = [];
      for await (const chunk of object.body) chunks.push(chunk as Buffer);
      await writeFile(join(dir.path, name), Buffer.concat(chunks));
    }
  }

  async function publish(fullName: string, provider: string, bucket: string, signed = true) {
    const folder = fullName.split("/")[1] as string;
    const repository = await h.addRepository(fullName);
    h.releases.addRelease(fullName, {
      tag: "v1.0.0",
      assets: [{ name: "app.bin", content: `${fullName} bytes` }],
      files: { ".delivery.yml": DECLARATION(provider, bucket, folder) },
    });
    const processor = h.processor(signed ? { signingKey: createPrivateKey(pem) } : {});
    const processing = await processor.check(repository, "manual");
    expect(processing.result.errors).toEqual([]);
    return { folder, repository, processor };
  }

  for (const [provider, bucket] of [
    ["local", "public"],
    ["objectstore", "downloads"],
  ] as const) {
    it(`writes SHA256SUMS.sig that the README's openssl command verifies (${provider})`, async () => {
      const store = provider === "local" ? h.local : h.objectstore;
      const { folder } = await publish(`acme/signed-${provider}`, provider, bucket);
      for (const version of ["1.0.0", "latest"]) {
        await download(store, bucket, `${folder}/${version}`);
        const { stdout } = await run("sh", ["-c", VERIFY], { cwd: dir.path });
        expect(stdout.trim()).toBe("Signature Verified Successfully");
      }
      // One changed byte of the sums and the same command refuses them.
      const sums = join(dir.path, "SHA256SUMS");
      await writeFile(sums, (await readFile(sums, "utf8")).replace(/^./, "0"));
      const refused = await run("sh", ["-c", VERIFY], { cwd: dir.path }).catch((error) => error);
      expect(refused.code).toBe(1);
      expect(refused.stdout.trim()).toBe("Signature Verification Failure");
    });
  }

  it("shows the same command in the README", async () => {
    const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");
    expect(readme).toContain(VERIFY);
  });

  it("removes a signature that no longer matches when a publication is not signed", async () => {
    const { folder, repository } = await publish("acme/unsigned-later", "local", "public");
    const keys = () => h.keys(h.local, "public", `${folder}/1.0.0/`, { withManifests: true });
    expect(await keys()).toContain(`${folder}/1.0.0/SHA256SUMS.sig`);
    await h.processor().reprocess(repository);
    expect(await keys()).not.toContain(`${folder}/1.0.0/SHA256SUMS.sig`);
    expect(await keys()).toContain(`${folder}/1.0.0/SHA256SUMS`);
  });

  it("reads the key from one line with \\n escapes (environment files)", () => {
    const config = loadConfig({ RELEASE_SIGNING_KEY: pem.trim().replaceAll("\n", "\\n") });
    expect(config.releaseSigningKey).toBe(pem.trim());
  });

  it.each([
    ["garbage", /^cannot be read as a PEM private key \(.+\)$/],
    [
      "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
      /^cannot be read as a PEM private key \(.+\)$/,
    ],
  ])("refuses an unreadable key, naming the variable (%#)", (value, problem) => {
    const error = (() => {
      try {
        loadConfig({ RELEASE_SIGNING_KEY: value });
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/^RELEASE_SIGNING_KEY: /);
    expect((error as ConfigError).message.replace(/^RELEASE_SIGNING_KEY: /, "")).toMatch(problem);
  });

  it("refuses a key that is not Ed25519", async () => {
    await run(
      "openssl",
      ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.pem"],
      {
        cwd: dir.path,
      },
    );
    const ec = await readFile(join(dir.path, "ec.pem"), "utf8");
    expect(() => loadConfig({ RELEASE_SIGNING_KEY: ec })).toThrow(
      "RELEASE_SIGNING_KEY: expected an Ed25519 private key, got ec",
    );
  });

  it("stops the boot with exit 2 and one line naming the variable, never the key", async () => {
    const secret = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ5dGVz\n-----END PRIVATE KEY-----";
    const started = await runDelivery(
      ["serve"],
      { HOST: "127.0.0.1", PORT: "0", RELEASE_SIGNING_KEY: secret },
      dir.path,
    );
    expect(started.code).toBe(2);
    expect(started.stdout).toBe("");
    expect(started.stderr).toMatch(
      /^delivery: RELEASE_SIGNING_KEY: cannot be read as a PEM private key \(.+\)\n$/,
    );
    expect(started.stderr).not.toContain("c2VjcmV0LWJ5dGVz");
  });
});
