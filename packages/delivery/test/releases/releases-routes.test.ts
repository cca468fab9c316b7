import type { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ObjectStore } from "../../src/storage/object-store.js";
import { type GithubStub, startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { createTestDatabase, dialectAvailable } from "../helpers/test-database.js";
import { createReleaseStub, type ReleaseStub } from "./release-stub.js";

const KEY = { "x-api-key": TEST_API_KEY };
const DECLARATION = `
storage: {provider: local, bucket: public}
artifacts:
  - {source: tool.bin, destination: 'tool-{version}.bin'}
docs:
  - {source: README.md, destination: README.md}
`;

describe("the release endpoints", () => {
  // Each test gets its own app, database and code host, and publishes what it needs.
  let stub: GithubStub;
  let releases: ReleaseStub;
  let t: TestApp;

  beforeEach(async () => {
    releases = createReleaseStub();
    stub = await startGithubStub({ routes: [releases.routes] });
    t = await createTestApp("sqlite", { stub });
  });
  afterEach(async () => {
    await t.close();
    await stub.close();
  });

  async function register(fullName: string): Promise<void> {
    stub.addRepository(fullName);
    const reply = await t.app.inject({
      method: "POST",
      url: "/monitor/repositories",
      headers: KEY,
      payload: { repository: fullName },
    });
    expect(reply.statusCode).toBe(201);
  }

  function release(fullName: string, tag: string, content = `${tag} bytes`) {
    releases.addRelease(fullName, {
      tag,
      assets: [{ name: "tool.bin", content }],
      files: { ".delivery.yml": DECLARATION, "README.md": `# ${tag}` },
    });
  }

  const post = (url: string, headers: Record<string, string> = KEY) =>
    t.app.inject({ method: "POST", url, headers });
  const get = (url: string, headers: Record<string, string> = KEY) =>
    t.app.inject({ method: "GET", url, headers });

  /** Posts to a release endpoint that must answer 200 with no error in the result. */
  async function publish(url: string) {
    const reply = await post(url);
    expect(reply.statusCode, url).toBe(200);
    expect(reply.json(), url).toMatchObject({ errors: [] });
  }

  async function deactivate(fullName: string) {
    const repository = (await get("/monitor/repositories"))
      .json()
      .repositories.find((r: { full_name: string }) => r.full_name === fullName);
    const reply = await t.app.inject({
      method: "PATCH",
      url: `/monitor/repositories/${repository.id}`,
      headers: KEY,
      payload: { active: false },
    });
    expect(reply.statusCode).toBe(200);
  }

  /**
   * acme/tool with three releases processed: v1.0.0 checked, v1.1.0 reprocessed as the latest,
   * v1.0.0 reprocessed by tag, then v1.2.0 checked.
   */
  async function toolWithThreeReleases() {
    await register("acme/tool");
    release("acme/tool", "v1.0.0");
    await publish("/monitor/check/acme/tool");
    release("acme/tool", "v1.1.0");
    await publish("/monitor/reprocess/acme/tool");
    await publish("/monitor/reprocess/acme/tool/v1.0.0");
    release("acme/tool", "v1.2.0");
    await publish("/monitor/check/acme/tool");
  }

  it("refuses every release endpoint without credentials", async () => {
    for (const [method, url] of [
      ["POST", "/monitor/check/acme/tool"],
      ["POST", "/monitor/check-all"],
      ["POST", "/monitor/reprocess/acme/tool"],
      ["POST", "/monitor/reprocess/acme/tool/v1.0.0"],
      ["GET", "/monitor/dry-run/acme/tool"],
      ["GET", "/monitor/dry-run"],
      ["GET", "/monitor/history"],
      ["GET", "/monitor/history/acme/tool"],
    ] as const) {
      const reply = await t.app.inject({ method, url });
      expect(reply.statusCode, url).toBe(401);
      expect(reply.json()).toEqual({ error: "Unauthorized" });
    }
  });

  it("checks a repository: publishes the latest release and serves it under /files", async () => {
    await register("acme/tool");
    release("acme/tool", "v1.0.0");
    const reply = await post("/monitor/check/acme/tool");
    expect(reply.statusCode).toBe(200);
    const result = reply.json();
    expect(result).toMatchObject({
      repository: "acme/tool",
      tag: "v1.0.0",
      artifacts: [
        {
          file: "tool.bin",
          destination: "tool-1.0.0.bin",
          type: "binary",
          size: 12,
          latest_url: "http://delivery.test/files/public/tool/latest/tool-latest.bin",
        },
      ],
      documentation: [{ type: "md", file: "README.md", destination: "README.md" }],
      skipped: [],
      errors: [],
    });
    expect(result.processed).toHaveLength(2);

    const file = await t.app.inject({
      method: "GET",
      url: "/files/public/tool/1.0.0/tool-1.0.0.bin",
    });
    expect(file.statusCode).toBe(200);
    expect(file.body).toBe("v1.0.0 bytes");
    expect(file.headers["content-length"]).toBe("12");

    const repositories = (await get("/monitor/repositories")).json().repositories;
    expect(
      repositories.find((r: { full_name: string }) => r.full_name === "acme/tool").last_check,
    ).not.toBeNull();
  });

  it("answers the same check again with the release skipped", async () => {
    await register("acme/tool");
    release("acme/tool", "v1.0.0");
    await publish("/monitor/check/acme/tool");
    const reply = await post("/monitor/check/acme/tool");
    expect(reply.json()).toMatchObject({
      tag: "v1.0.0",
      processed: [],
      skipped: ["v1.0.0: already processed"],
    });
  });

  it("answers 404 for a repository that is not registered", async () => {
    const reply = await post("/monitor/check/acme/unknown");
    expect(reply.statusCode).toBe(404);
    expect(reply.json()).toEqual({
      error: "Repository acme/unknown is not registered in the database",
    });
  });

  it("reprocesses the latest release and a named tag", async () => {
    await register("acme/tool");
    release("acme/tool", "v1.0.0");
    await publish("/monitor/check/acme/tool");
    release("acme/tool", "v1.1.0");
    const latest = await post("/monitor/reprocess/acme/tool");
    expect(latest.statusCode).toBe(200);
    expect(latest.json()).toMatchObject({ tag: "v1.1.0", errors: [] });
    const tagged = await post("/monitor/reprocess/acme/tool/v1.0.0");
    expect(tagged.json()).toMatchObject({ tag: "v1.0.0", errors: [] });
    expect((await post("/monitor/reprocess/acme/tool/v7.0.0")).statusCode).toBe(404);
  });

  it("checks every active repository, reporting a failing one as {repository, error}", async () => {
    await register("acme/tool");
    await register("acme/norelease");
    await register("acme/inactive");
    release("acme/inactive", "v5.0.0");
    await deactivate("acme/inactive");
    release("acme/tool", "v1.2.0");

    const reply = await post("/monitor/check-all");
    expect(reply.statusCode).toBe(200);
    const body = reply.json();
    expect(body.success).toBe(true);
    expect(body.checked).toBe(2);
    expect(body.results).toEqual([
      expect.objectContaining({ repository: "acme/tool", tag: "v1.2.0", errors: [] }),
      { repository: "acme/norelease", error: "No release found for acme/norelease" },
    ]);
  });

  it("lists releases without processing, for one repository and for all", async () => {
    await register("acme/tool");
    for (const tag of ["v1.0.0", "v1.1.0", "v1.2.0"]) release("acme/tool", tag);
    await register("acme/norelease");
    await register("acme/inactive");
    release("acme/inactive", "v5.0.0");
    await deactivate("acme/inactive");

    const one = await get("/monitor/dry-run/acme/tool");
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({
      repository: "acme/tool",
      total_releases: 3,
      releases: [
        {
          tag: "v1.2.0",
          name: "v1.2.0",
          prerelease: false,
          draft: false,
          assets_count: 1,
          assets: [{ name: "tool.bin", size: 12 }],
        },
        { tag: "v1.1.0" },
        { tag: "v1.0.0" },
      ],
    });
    const all = (await get("/monitor/dry-run")).json();
    expect(all.repositories.map((listing: { repository: string }) => listing.repository)).toEqual([
      "acme/tool",
      "acme/norelease",
      "acme/inactive",
    ]);
    expect(all.repositories[1]).toMatchObject({ total_releases: 0, releases: [] });
    expect((await get("/monitor/history")).json().total).toBe(0);
  });

  it("shows the history newest first with its total and limit, also per repository", async () => {
    await toolWithThreeReleases();
    const all = (await get("/monitor/history")).json();
    expect(all.total).toBe(3);
    expect(all.history.map((record: { tag: string }) => record.tag)).toEqual([
      "v1.2.0",
      "v1.0.0",
      "v1.1.0",
    ]);
    expect(all.history[0]).toEqual({
      id: expect.any(Number),
      repository: "acme/tool",
      tag: "v1.2.0",
      name: "v1.2.0",
      status: "success",
      files_count: 2,
      total_bytes: 12 + 8,
      errors: [],
      files: [
        { file: "tool.bin", size: 12, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
        { file: "README.md", size: 8, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      ],
      trigger: "manual",
      processed_at: expect.any(String),
      duration_ms: expect.any(Number),
    });
    const limited = (await get("/monitor/history?limit=1")).json();
    expect(limited.history).toHaveLength(1);
    expect(limited.total).toBe(3);
    const mine = (await get("/monitor/history/acme/tool?limit=2")).json();
    expect(mine.history.map((record: { trigger: string }) => record.trigger)).toEqual([
      "manual",
      "reprocess",
    ]);
    expect((await get("/monitor/history?limit=0")).statusCode).toBe(400);
    expect((await get("/monitor/history/acme/unknown")).statusCode).toBe(404);
  });

  it("counts the releases processed in the last 24 hours in the status", async () => {
    await toolWithThreeReleases();
    const status = (await t.app.inject({ method: "GET", url: "/monitor/status" })).json();
    expect(status.releases_last_24h).toBe(3);
  });

  it("accepts a logged-in user on the release endpoints", async () => {
    const user = { email: "ops@example.test", password: "correct horse battery", name: "Ops" };
    await t.app.inject({ method: "POST", url: "/auth/register", headers: KEY, payload: user });
    const login = await t.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { email: user.email, password: user.password },
    });
    const token = login.json().token as string;
    const reply = await get("/monitor/history?limit=1", { cookie: `access_token=${token}` });
    expect(reply.statusCode).toBe(200);
  });

  it("removes the history of a deleted repository", async () => {
    await register("acme/tool");
    release("acme/tool", "v1.0.0");
    await publish("/monitor/check/acme/tool");
    expect((await get("/monitor/history")).json().total).toBe(1);
    const repositories = (await get("/monitor/repositories")).json().repositories;
    const tool = repositories.find((r: { full_name: string }) => r.full_name === "acme/tool");
    const deleted = await t.app.inject({
      method: "DELETE",
      url: `/monitor/repositories/${tool.id}`,
      headers: KEY,
    });
    expect(deleted.statusCode).toBe(200);
    expect((await get("/monitor/history")).json()).toEqual({ history: [], total: 0 });
  });
});

/** Counts writes per key, to prove each object is written once. */
function countingStore(inner: ObjectStore & { root: string }) {
  const puts = new Map<string, number>();
  const store = Object.create(inner) as typeof inner;
  store.put = (bucket: string, key: string, body: Readable, options) => {
    puts.set(key, (puts.get(key) ?? 0) + 1);
    return inner.put(bucket, key, body, options);
  };
  return { store, puts };
}

const mariadb = await dialectAvailable("mysql");

describe.skipIf(!mariadb)("two instances on one MariaDB database", () => {
  it("publish a release once when both check it at the same moment", async () => {
    const releases = createReleaseStub();
    const stub = await startGithubStub({ routes: [releases.routes] });
    const testDatabase = await createTestDatabase("mysql");
    const { LocalObjectStore } = await import("../../src/storage/local-store.js");
    const { makeTempDir } = await import("@rd/common/test-kit");
    const dir = await makeTempDir();
    const { store, puts } = countingStore(new LocalObjectStore(dir.path));
    const storage = {
      local: store as InstanceType<typeof LocalObjectStore>,
      objectstore: null,
      defaultDeliveryUrl: (_provider: string, bucket: string) =>
        `http://delivery.test/files/${bucket}`,
    };
    const first = await createTestApp("mysql", { stub, testDatabase, storage });
    const second = await createTestApp("mysql", { stub, testDatabase, storage });
    try {
      const repos = ["acme/race-a", "acme/race-b", "acme/race-c"];
      for (const fullName of repos) {
        stub.addRepository(fullName);
        await first.app.inject({
          method: "POST",
          url: "/monitor/repositories",
          headers: KEY,
          payload: { repository: fullName },
        });
        releases.addRelease(fullName, {
          tag: "v1.0.0",
          assets: [{ name: "tool.bin", content: "x".repeat(256 * 1024) }],
          files: { ".delivery.yml": DECLARATION, "README.md": "# race" },
        });
      }
      for (const fullName of repos) {
        const url = `/monitor/check/${fullName}`;
        const answers = await Promise.all([
          first.app.inject({ method: "POST", url, headers: KEY }),
          second.app.inject({ method: "POST", url, headers: KEY }),
        ]);
        expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
        const published = answers
          .map((answer) => answer.json())
          .filter((result) => result.processed.length > 0);
        expect(published, fullName).toHaveLength(1);
        const other = answers
          .map((answer) => answer.json())
          .find((result) => result.processed.length === 0);
        expect(other.skipped[0]).toMatch(
          /^v1\.0\.0: (already processed|being processed by another instance)$/,
        );
      }
      for (const [key, count] of puts) expect(count, key).toBe(1);
      // Two files to versioned and latest/, and each folder's SHA256SUMS and manifest.json.
      expect(puts.size).toBe(repos.length * (4 + 4));
      const history = (
        await second.app.inject({ method: "GET", url: "/monitor/history", headers: KEY })
      ).json();
      expect(history.total).toBe(repos.length);
      const downloads = stub.state.requests.filter((request) =>
        request.path.startsWith("/signed/assets/"),
      );
      expect(downloads).toHaveLength(repos.length);
    } finally {
      await first.close();
      await second.close();
      await testDatabase.drop();
      await stub.close();
      await dir.remove();
    }
  });
});
