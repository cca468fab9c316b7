import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buffer } from "node:stream/consumers";
import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESERVED_NAMES } from "../../src/releases/reserved-names.js";
import { INCOMING_DIR } from "../../src/storage/local-store.js";
import type { ObjectStore } from "../../src/storage/object-store.js";
import { type GithubStub, startGithubStub } from "../fixtures/github-stub.js";
import { readPublished } from "../helpers/published-objects.js";
import {
  createReleaseStub,
  type DownloadFault,
  type ReleaseStub,
  type StubAsset,
} from "../releases/release-stub.js";
import { buildZip } from "../releases/zip-fixture.js";
import { S3RVER_CREDENTIALS, type S3Server, startS3Server } from "../storage/s3-server.js";
import { DeliveryProcess } from "./delivery-process.js";

// The compiled service as a child process, configured only through its environment, publishing
// from the GitHub stub to local storage and to s3rver while downloads break off, stall, or the
// process itself is killed.

const API_KEY = "process-test-api-key";
const BUCKET = "releases";
const PROVIDERS = ["local", "objectstore"] as const;
const TYPES = ["binary", "zip"] as const;
type Provider = (typeof PROVIDERS)[number];
type ArtifactType = (typeof TYPES)[number];

const BINARY = Buffer.from("0123456789abcdef".repeat(64 * 1024)); // 1 MiB
const ZIP_ENTRIES: Array<[string, string]> = [
  ["index.html", "<h1>Widget</h1>".repeat(2000)],
  ["assets/app.js", "console.log(1);".repeat(2000)],
];

interface HistoryRecordBody {
  status: string;
  errors: string[];
}

describe("the service process while publishing", () => {
  let dir: { path: string; remove(): Promise<void> };
  let stub: GithubStub;
  let releases: ReleaseStub;
  let s3: S3Server;
  let s3store: ObjectStore;
  let siteZip: Buffer;
  let baseEnv: Record<string, string>;

  beforeAll(async () => {
    dir = await makeTempDir("rd-delivery-process-");
    releases = createReleaseStub();
    stub = await startGithubStub({ routes: [releases.routes] });
    s3 = await startS3Server([BUCKET]);
    s3store = s3.store();
    siteZip = await buildZip(ZIP_ENTRIES);
    baseEnv = {
      API_KEY,
      JWT_SECRET: "process-test-jwt-secret-0123456789abcdef",
      CODEHOST_API_URL: stub.url,
      CODEHOST_TOKEN: "process-test-token",
      OBJECTSTORE_ENDPOINT: s3.endpoint,
      OBJECTSTORE_ACCESS_KEY: S3RVER_CREDENTIALS.accessKeyId,
      OBJECTSTORE_SECRET_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      SCHEDULER_INTERVAL_MINUTES: "0",
    };
  }, 120_000);
  afterAll(async () => {
    await s3?.close();
    await stub?.close();
    await dir?.remove();
  });

  /** Environment of one service instance: its own database and local storage under `name`. */
  function envFor(name: string, extra: Record<string, string>): Record<string, string> {
    return {
      ...baseEnv,
      DATABASE_URL: `sqlite:${join(dir.path, name, "delivery.db")}`,
      LOCAL_STORAGE_DIR: join(dir.path, name, "files"),
      ...extra,
    };
  }

  async function call(
    service: DeliveryProcess,
    method: string,
    path: string,
    body?: object,
  ): Promise<{ status: number; json: unknown }> {
    const response = await fetch(`${service.address}${path}`, {
      method,
      headers: {
        "x-api-key": API_KEY,
        ...(body ? { "content-type": "application/json" } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, json: await response.json() };
  }

  /** Registers a repository on the stub and the service, with one release of one artifact. */
  async function addRepository(
    service: DeliveryProcess,
    fullName: string,
    provider: Provider,
    type: ArtifactType,
    faults: DownloadFault[],
  ): Promise<StubAsset> {
    stub.addRepository(fullName);
    const asset = type === "zip" ? "site.zip" : "tool.bin";
    const destination = type === "zip" ? "site" : "bin/tool.bin";
    const release = releases.addRelease(fullName, {
      tag: "v1.0.0",
      assets: [{ name: asset, content: type === "zip" ? siteZip : BINARY, faults }],
      files: {
        ".delivery.yml": `storage: {provider: ${provider}, bucket: ${BUCKET}}
artifacts: [{source: ${asset}, destination: ${destination}, type: ${type}, latest: true}]
`,
      },
    });
    const added = await call(service, "POST", "/monitor/repositories", { repository: fullName });
    expect(added.status).toBe(201);
    return release.assets[0] as StubAsset;
  }

  /**
   * Every object under `folder/` with its content, sorted by key; each folder's checksums and
   * manifest aside (checksums-manifest.test.ts covers them), so the files compare as published.
   */
  async function published(
    provider: Provider,
    localRoot: string,
    folder: string,
  ): Promise<Record<string, Buffer>> {
    const found: Record<string, Buffer> = {};
    const isManifest = (key: string) =>
      RESERVED_NAMES.includes(key.slice(key.lastIndexOf("/") + 1));
    if (provider === "objectstore") {
      for await (const object of s3store.list(BUCKET, `${folder}/`)) {
        if (isManifest(object.key)) continue;
        const read = await readPublished(s3store, BUCKET, object.key);
        if (read) found[object.key] = await buffer(read.body);
      }
      return found;
    }
    const bucketDir = join(localRoot, BUCKET);
    const entries = await readdir(join(bucketDir, folder), { recursive: true }).catch(() => []);
    for (const entry of entries.sort()) {
      if (isManifest(entry)) continue;
      const path = join(bucketDir, folder, entry);
      const content = await readFile(path).catch(() => null);
      if (content) found[`${folder}/${entry}`] = content;
    }
    return found;
  }

  /** The objects a complete publication of the artifact holds under `folder/`. */
  function complete(folder: string, type: ArtifactType): Record<string, string> {
    if (type === "binary") {
      const binary = BINARY.toString("binary");
      return {
        [`${folder}/1.0.0/bin/tool.bin`]: binary,
        [`${folder}/latest/bin/tool.bin`]: binary,
      };
    }
    const objects: Record<string, string> = {};
    for (const version of ["1.0.0", "latest"]) {
      for (const [path, content] of ZIP_ENTRIES)
        objects[`${folder}/${version}/site/${path}`] = content;
    }
    return objects;
  }

  function asText(objects: Record<string, Buffer>): Record<string, string> {
    return Object.fromEntries(
      Object.entries(objects).map(([key, content]) => [key, content.toString("binary")]),
    );
  }

  async function historyOf(service: DeliveryProcess, fullName: string) {
    const answer = await call(service, "GET", `/monitor/history/${fullName}`);
    expect(answer.status).toBe(200);
    return answer.json as { history: HistoryRecordBody[]; total: number };
  }

  it("survives truncated, reset and stalled downloads of binaries and zips on both providers: each release fails with the reason, nothing is half-published, and the next check publishes it", async () => {
    const localRoot = join(dir.path, "broken", "files");
    const service = await DeliveryProcess.start(
      envFor("broken", { CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS: "1" }),
    );
    try {
      const kinds: Array<DownloadFault["kind"]> = ["truncated", "reset", "stalled"];
      const cases = PROVIDERS.flatMap((provider) =>
        TYPES.flatMap((type) => kinds.map((kind) => ({ provider, type, kind }))),
      );
      const named = cases.map((c) => ({ ...c, folder: `${c.kind}-${c.type}-${c.provider}` }));
      for (const { provider, type, kind, folder } of named) {
        const size = type === "zip" ? siteZip.length : BINARY.length;
        const fault: DownloadFault = { kind, after: Math.floor(size / 2) };
        // Every attempt of the first check breaks (the processor tries three times).
        await addRepository(service, `broken/${folder}`, provider, type, [fault, fault, fault]);
      }

      const firstChecks = await Promise.all(
        named.map(({ folder }) => call(service, "POST", `/monitor/check/broken/${folder}`)),
      );
      expect(await service.healthy()).toBe(true);
      for (const [index, { provider, kind, folder }] of named.entries()) {
        expect(firstChecks[index]?.status).toBe(200);
        const { history } = await historyOf(service, `broken/${folder}`);
        expect(history).toHaveLength(1);
        expect(history[0]?.status).toBe("failed");
        const reason =
          kind === "stalled" ? "The download stalled after" : "The download broke off after";
        expect(history[0]?.errors).toEqual([expect.stringContaining(reason)]);
        expect(await published(provider, localRoot, folder)).toEqual({});
      }
      expect(await readdir(join(localRoot, INCOMING_DIR)).catch(() => [])).toEqual([]);

      for (const { folder } of named) {
        const retried = await call(service, "POST", `/monitor/check/broken/${folder}`);
        expect(retried.status).toBe(200);
        expect((retried.json as { errors: string[] }).errors).toEqual([]);
      }
      for (const { provider, type, folder } of named) {
        const { history } = await historyOf(service, `broken/${folder}`);
        expect(history.map((record) => record.status)).toEqual(["success"]);
        expect(asText(await published(provider, localRoot, folder))).toEqual(
          complete(folder, type),
        );
      }
      expect(await service.healthy()).toBe(true);
    } finally {
      await service.stop();
    }
  }, 120_000);

  /** Polls `condition` every 100 ms until it holds; fails after `boundMs` with `what`. */
  async function waitFor(
    what: string,
    boundMs: number,
    condition: () => Promise<boolean>,
    state: () => Promise<unknown> = async () => undefined,
  ) {
    const deadline = Date.now() + boundMs;
    while (!(await condition())) {
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await state())}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it("killed mid-publish (SIGKILL) and restarted: the boot removes the dead process's scratch files and nothing else, the release is taken over once its claim's lease expires, and ends completely published with one history row", async () => {
    const localRoot = join(dir.path, "killed", "files");
    const incoming = join(localRoot, INCOMING_DIR);
    const env = envFor("killed", { RELEASE_CLAIM_LEASE_SECONDS: "3" });
    const first = await DeliveryProcess.start(env);
    const cases = PROVIDERS.flatMap((provider) =>
      TYPES.map((type) => ({ provider, type, folder: `${type}-${provider}` })),
    );
    const assets: StubAsset[] = [];
    for (const { provider, type, folder } of cases) {
      const size = type === "zip" ? siteZip.length : BINARY.length;
      // The first download sends half the asset, then nothing: the publish hangs there.
      const stall: DownloadFault = { kind: "stalled", after: Math.floor(size / 2) };
      assets.push(await addRepository(first, `killed/${folder}`, provider, type, [stall]));
    }
    const checks = cases.map(({ folder }) =>
      call(first, "POST", `/monitor/check/killed/${folder}`).catch((error: unknown) => error),
    );
    // Mid-publish: every download stalled, with the local binary's two half-written objects
    // (versioned and latest) and both zips' archives on disk.
    const scratch = async () => (await readdir(incoming).catch(() => [])).sort();
    await waitFor(
      "every download to stall",
      30_000,
      async () => {
        const names = await scratch();
        return (
          assets.every((asset) => asset.faults.length === 0) &&
          names.filter((name) => name.endsWith(".zip")).length === 2 &&
          names.filter((name) => !name.endsWith(".zip")).length === 2
        );
      },
      async () => ({ scratch: await scratch(), faults: assets.map((a) => a.faults.length) }),
    );
    const leftovers = await scratch();
    // Files that are not this host's dead scratch: kept by the boot.
    const foreign = [
      "notes.txt",
      "otherhost_4242_0badf00d_123e4567-e89b-12d3-a456-426614174000.zip",
    ];
    for (const name of foreign) await writeFile(join(incoming, name), "keep me");
    await first.stop("SIGKILL");
    await Promise.all(checks);

    const second = await DeliveryProcess.start(env);
    try {
      expect((await scratch()).sort()).toEqual([...foreign].sort());
      expect(leftovers).toHaveLength(4);

      for (const { folder } of cases) {
        let outcome: { skipped: string[]; errors: string[] } | undefined;
        await waitFor(`${folder} to be taken over after the lease`, 30_000, async () => {
          const answer = await call(second, "POST", `/monitor/check/killed/${folder}`);
          expect(answer.status).toBe(200);
          outcome = answer.json as { skipped: string[]; errors: string[] };
          return !outcome.skipped.some((line) => line.includes("another instance"));
        });
        expect(outcome?.errors).toEqual([]);
      }
      for (const { provider, type, folder } of cases) {
        const { history, total } = await historyOf(second, `killed/${folder}`);
        expect(total).toBe(1);
        expect(history.map((record) => record.status)).toEqual(["success"]);
        expect(asText(await published(provider, localRoot, folder))).toEqual(
          complete(folder, type),
        );
      }
      expect((await scratch()).sort()).toEqual([...foreign].sort());
      expect(await second.stop()).toBe(0);
    } finally {
      await second.stop("SIGKILL");
    }
  }, 120_000);
});
