import { join } from "node:path";
import { text } from "node:stream/consumers";
import { createLogging } from "@rd/common";
import { LogCapture, makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { type RunningService, startService } from "../../src/main.js";
import type { ReleaseResult } from "../../src/releases/release-result.js";
import { type GithubStub, startGithubStub } from "../fixtures/github-stub.js";
import { readPublished } from "../helpers/published-objects.js";
import { type S3Server, startS3Server } from "../storage/s3-server.js";
import { createReleaseStub, type ReleaseStub } from "./release-stub.js";

const API_KEY = "service-publishing-api-key";

describe("the running service publishes releases to both providers", () => {
  let stub: GithubStub;
  let releases: ReleaseStub;
  let s3: S3Server;
  let dir: { path: string; remove(): Promise<void> };
  let service: RunningService;

  beforeAll(async () => {
    releases = createReleaseStub();
    stub = await startGithubStub({ routes: [releases.routes] });
    s3 = await startS3Server(["cloud"]);
    dir = await makeTempDir();
    const config = loadConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      DATABASE_URL: `sqlite:${join(dir.path, "delivery.db")}`,
      API_KEY,
      JWT_SECRET: "service-publishing-jwt-secret-0123456789abcdef",
      CODEHOST_API_URL: stub.url,
      CODEHOST_TOKEN: "stub-token",
      PUBLIC_URL: "http://files.example.test",
      LOCAL_STORAGE_DIR: join(dir.path, "files"),
      OBJECTSTORE_ENDPOINT: s3.endpoint,
      OBJECTSTORE_ACCESS_KEY: "S3RVER",
      OBJECTSTORE_SECRET_KEY: "S3RVER",
      SCHEDULER_INTERVAL_MINUTES: "0",
    });
    service = await startService(config, {
      logging: createLogging({ destination: new LogCapture() }),
    });
  });
  afterAll(async () => {
    await service.stop();
    await s3.close();
    await stub.close();
    await dir.remove();
  });

  const call = (method: string, path: string, body?: object) =>
    fetch(`${service.address}${path}`, {
      method,
      headers: {
        "x-api-key": API_KEY,
        ...(body ? { "content-type": "application/json" } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  it("publishes a local release served at /files and an objectstore release in the bucket", async () => {
    for (const [fullName, storage] of [
      ["acme/local-app", "storage: {bucket: site}"],
      ["acme/cloud-app", "storage: {provider: objectstore, bucket: cloud}"],
    ] as const) {
      stub.addRepository(fullName);
      expect((await call("POST", "/monitor/repositories", { repository: fullName })).status).toBe(
        201,
      );
      releases.addRelease(fullName, {
        tag: "v3.0.0",
        assets: [{ name: "app.tar.gz", content: `${fullName} archive` }],
        files: {
          ".delivery.yml": `${storage}\nartifacts: [{source: app.tar.gz, destination: app.tar.gz}]\n`,
        },
      });
    }

    const local = (await (
      await call("POST", "/monitor/check/acme/local-app")
    ).json()) as ReleaseResult;
    expect(local.processed[0]?.versioned_url).toBe(
      "http://files.example.test/files/site/local-app/3.0.0/app.tar.gz",
    );
    const served = await fetch(`${service.address}/files/site/local-app/latest/app.tar.gz`);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("application/gzip");
    expect(await served.text()).toBe("acme/local-app archive");

    const cloud = (await (
      await call("POST", "/monitor/check/acme/cloud-app")
    ).json()) as ReleaseResult;
    expect(cloud.artifacts[0]?.latest_url).toBe(`${s3.endpoint}/cloud/cloud-app/latest/app.tar.gz`);
    const object = await readPublished(s3.store(), "cloud", "cloud-app/3.0.0/app.tar.gz");
    if (!object) throw new Error("object missing");
    expect(await text(object.body)).toBe("acme/cloud-app archive");
  });

  it("reports the object store as up and counts the releases of the last 24 hours", async () => {
    const status = (await (await fetch(`${service.address}/monitor/status`)).json()) as {
      services: { objectstore: boolean };
      releases_last_24h: number;
    };
    expect(status.services.objectstore).toBe(true);
    expect(status.releases_last_24h).toBe(2);
  });
});
