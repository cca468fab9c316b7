import { createHash } from "node:crypto";
import { buffer, text } from "node:stream/consumers";
import { createLogging } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GithubClient } from "../../../src/codehost/github/github-client.js";
import { type GithubStub, startGithubStub } from "../../fixtures/github-stub.js";
import { createReleaseStub, generatedByte, type ReleaseStub } from "../../releases/release-stub.js";

describe("the code host client's release questions", () => {
  let stub: GithubStub;
  let releases: ReleaseStub;
  let client: GithubClient;

  beforeAll(async () => {
    releases = createReleaseStub();
    stub = await startGithubStub({ routes: [releases.routes] });
    stub.addRepository("acme/widget");
    const logging = createLogging({ destination: new LogCapture() });
    client = new GithubClient({
      baseUrl: stub.url,
      token: "test-token",
      logger: logging.forTarget("delivery::codehost"),
      policy: { retries: 0, retryBaseDelayMs: 1, downloadIdleTimeoutMs: 300 },
    });
  });
  afterAll(() => stub.close());

  it("reads the latest release, skipping drafts and prereleases", async () => {
    releases.addRelease("acme/widget", { tag: "v1.0.0", createdAt: "2026-01-01T00:00:00Z" });
    releases.addRelease("acme/widget", {
      tag: "v1.1.0",
      name: "Widget 1.1",
      createdAt: "2026-01-02T00:00:00Z",
      assets: [{ name: "widget.bin", content: "bytes" }],
    });
    releases.addRelease("acme/widget", {
      tag: "v2.0.0-rc1",
      prerelease: true,
      createdAt: "2026-01-03T00:00:00Z",
    });
    releases.addRelease("acme/widget", {
      tag: "v2.0.0",
      draft: true,
      createdAt: "2026-01-04T00:00:00Z",
    });
    const latest = await client.getLatestRelease("acme", "widget");
    expect(latest).toMatchObject({
      tag: "v1.1.0",
      name: "Widget 1.1",
      draft: false,
      prerelease: false,
      assets: [{ name: "widget.bin", size: 5, contentType: "application/octet-stream" }],
    });
    expect(await client.getLatestRelease("acme", "nothing")).toBeNull();
  });

  it("reads a release by tag, or null", async () => {
    expect((await client.getReleaseByTag("acme", "widget", "v1.0.0"))?.tag).toBe("v1.0.0");
    expect(await client.getReleaseByTag("acme", "widget", "v9.9.9")).toBeNull();
  });

  it("lists every release across pages of 100", async () => {
    for (let i = 0; i < 230; i++) {
      releases.addRelease("acme/many", {
        tag: `v0.0.${i}`,
        createdAt: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(),
      });
    }
    const all = await client.listReleases("acme", "many");
    expect(all).toHaveLength(230);
    expect(all?.[0]?.tag).toBe("v0.0.229");
    const pages = stub.state.requests.filter((r) => r.path === "/repos/acme/many/releases");
    expect(pages).toHaveLength(3);
  });

  it("streams a repository file at a tag, and answers null for a missing one", async () => {
    releases.addRelease("acme/docs", {
      tag: "v3.0.0",
      files: { ".delivery.yml": "storage: {bucket: files}\n", "docs/guide.md": "# Guide\n" },
    });
    const file = await client.getFileAtRef("acme", "docs", "docs/guide.md", "v3.0.0");
    if (!file) throw new Error("guide missing");
    expect(await text(file.body)).toBe("# Guide\n");
    expect(await client.getFileAtRef("acme", "docs", "docs/missing.md", "v3.0.0")).toBeNull();
  });

  it("downloads an asset through the signed redirect without sending the token there", async () => {
    const release = releases.addRelease("acme/assets", {
      tag: "v1.0.0",
      assets: [{ name: "tool.bin", content: "tool-bytes" }],
    });
    const asset = release.assets[0];
    if (!asset) throw new Error("no asset");
    const download = await client.downloadAsset("acme", "assets", asset.id);
    expect(download.size).toBe(10);
    expect(await text(download.body)).toBe("tool-bytes");
    const api = stub.requestsTo(`/repos/acme/assets/releases/assets/${asset.id}`);
    expect(api.at(-1)?.authorization).toBe("token test-token");
    const signed = stub.requestsTo(`/signed/assets/${asset.id}`);
    expect(signed).toHaveLength(1);
    expect(signed[0]?.authorization).toBeUndefined();
  });

  it("asks the API for a fresh signed URL on each download", async () => {
    const release = releases.addRelease("acme/fresh", {
      tag: "v1.0.0",
      assets: [{ name: "a.bin", content: "a" }],
    });
    const id = release.assets[0]?.id ?? 0;
    const before = releases.state.signedUrls.length;
    await text((await client.downloadAsset("acme", "fresh", id)).body);
    await text((await client.downloadAsset("acme", "fresh", id)).body);
    const urls = releases.state.signedUrls.slice(before);
    expect(urls).toHaveLength(2);
    expect(urls[0]).not.toBe(urls[1]);
  });

  it("reports a failed signed download as the code host being unavailable", async () => {
    const release = releases.addRelease("acme/broken", {
      tag: "v1.0.0",
      assets: [{ name: "a.bin", content: "a" }],
    });
    releases.state.failSignedDownloads = 1;
    await expect(
      client.downloadAsset("acme", "broken", release.assets[0]?.id ?? 0),
    ).rejects.toMatchObject({ code: "codehost_unavailable" });
  });

  it("cuts a download that stops sending, instead of waiting forever", async () => {
    const release = releases.addRelease("acme/stalled", {
      tag: "v1.0.0",
      assets: [{ name: "a.bin", content: "x".repeat(10_000) }],
    });
    releases.state.stallNextDownloadAfter = 1000;
    const download = await client.downloadAsset("acme", "stalled", release.assets[0]?.id ?? 0);
    const started = Date.now();
    await expect(buffer(download.body)).rejects.toMatchObject({ code: "codehost_unavailable" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("gives up on a signed URL that never answers, within the request timeout", async () => {
    const impatient = new GithubClient({
      baseUrl: stub.url,
      token: "test-token",
      logger: createLogging({ destination: new LogCapture() }).forTarget("delivery::codehost"),
      policy: { retries: 0, requestTimeoutMs: 300, downloadIdleTimeoutMs: 60_000 },
    });
    const release = releases.addRelease("acme/unanswered", {
      tag: "v1.0.0",
      assets: [{ name: "a.bin", content: "a", faults: [{ kind: "unanswered", after: 0 }] }],
    });
    const started = Date.now();
    await expect(
      impatient.downloadAsset("acme", "unanswered", release.assets[0]?.id ?? 0),
    ).rejects.toMatchObject({ code: "codehost_unavailable" });
    // Bounded by the 300 ms request timeout, far below the 60 s idle timeout of the body.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("says how far a download got when it breaks off or stalls", async () => {
    const content = "x".repeat(10_000);
    const release = releases.addRelease("acme/broken-off", {
      tag: "v1.0.0",
      assets: [
        {
          name: "a.bin",
          content,
          faults: [
            { kind: "truncated", after: 1000 },
            { kind: "reset", after: 1000 },
            { kind: "stalled", after: 1000 },
          ],
        },
      ],
    });
    const id = release.assets[0]?.id ?? 0;
    const messages: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const download = await client.downloadAsset("acme", "broken-off", id);
      const failure = await buffer(download.body).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: "codehost_unavailable" });
      messages.push((failure as Error).message);
    }
    expect(messages).toEqual([
      expect.stringMatching(/^The download broke off after \d+ of 10000 bytes: \S/),
      expect.stringMatching(/^The download broke off after \d+ of 10000 bytes: \S/),
      "The download stalled after 1000 of 10000 bytes (nothing for 300 ms)",
    ]);
    expect(await text((await client.downloadAsset("acme", "broken-off", id)).body)).toBe(content);
  });

  it("asks for an asset the way the Octokit client asks: retries, rate limits, 4xx at once", async () => {
    const logs = new LogCapture();
    const retrying = new GithubClient({
      baseUrl: stub.url,
      token: "a.b.c",
      logger: createLogging({ destination: logs }).forTarget("delivery::codehost"),
      policy: { retries: 2, retryBaseDelayMs: 1 },
    });
    const release = releases.addRelease("acme/policy", {
      tag: "v1.0.0",
      assets: [{ name: "a.bin", content: "policy-bytes" }],
    });
    const id = release.assets[0]?.id ?? 0;
    const api = `/repos/acme/policy/releases/assets/${id}`;
    stub.failNext(2, 502);
    expect(await text((await retrying.downloadAsset("acme", "policy", id)).body)).toBe(
      "policy-bytes",
    );
    expect(stub.requestsTo(api)).toHaveLength(3);
    expect(stub.requestsTo(api)[0]?.authorization).toBe("bearer a.b.c");

    stub.failNext(3, 503);
    await expect(retrying.downloadAsset("acme", "policy", id)).rejects.toMatchObject({
      code: "codehost_unavailable",
      details: { status: 503 },
    });
    expect(stub.requestsTo(api)).toHaveLength(6);

    stub.failNext(1, 404);
    await expect(retrying.downloadAsset("acme", "policy", id)).rejects.toMatchObject({
      details: { status: 404 },
    });
    expect(stub.requestsTo(api)).toHaveLength(7);

    stub.exhaustRateLimitNext(0);
    expect(await text((await retrying.downloadAsset("acme", "policy", id)).body)).toBe(
      "policy-bytes",
    );
    expect(stub.requestsTo(api)).toHaveLength(9);
    const limited = logs.lines.map(
      (line) => line.fields as { message?: string; waiting?: boolean },
    );
    expect(limited).toContainEqual(
      expect.objectContaining({ message: "code host rate limit exhausted", waiting: true }),
    );

    stub.exhaustRateLimitNext(3600);
    await expect(retrying.downloadAsset("acme", "policy", id)).rejects.toMatchObject({
      details: { status: 403 },
    });
    expect(stub.requestsTo(api)).toHaveLength(10);
  });

  it("streams a large generated asset intact", async () => {
    const size = 8 * 1024 * 1024 + 7;
    const release = releases.addRelease("acme/large", {
      tag: "v1.0.0",
      assets: [{ name: "big.bin", content: { generated: size } }],
    });
    const download = await client.downloadAsset("acme", "large", release.assets[0]?.id ?? 0);
    const bytes = await buffer(download.body);
    expect(bytes.length).toBe(size);
    const expected = Buffer.alloc(size);
    for (let i = 0; i < size; i++) expected[i] = generatedByte(i);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(
      createHash("sha256").update(expected).digest("hex"),
    );
  });
});
