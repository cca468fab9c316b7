import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MonitorEvent } from "../../src/monitor/monitor-events.js";
import { signatureOf } from "../../src/webhooks/webhook-signature.js";
import { startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { createReleaseStub, type ReleaseStub } from "../releases/release-stub.js";

const SECRET = "monitor-events-webhook-secret";
const ASSET_BYTES = 24 * 1024 * 1024;
const DECLARATION = `storage: {bucket: site}
artifacts:
  - {source: app.bin, destination: app.bin, latest: false}
  - {source: notes.txt, destination: notes.txt, latest: false}
`;

/** The events of one SSE connection, parsed as they arrive. */
async function openStream(base: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const response = await fetch(`${base}/monitor/events`, {
    headers: { accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  const events: MonitorEvent[] = [];
  const names: string[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (name && data) {
          names.push(name);
          events.push(JSON.parse(data) as MonitorEvent);
        }
        end = buffer.indexOf("\n\n");
      }
    }
  })().catch(() => undefined);
  return {
    response,
    events,
    names,
    /** Waits until an event matching `test` has arrived. */
    async until(test: (event: MonitorEvent) => boolean): Promise<MonitorEvent> {
      for (let waited = 0; waited < 20_000; waited += 20) {
        const found = events.find(test);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no such event among ${JSON.stringify(events.map((e) => e.type))}`);
    },
    async close() {
      controller.abort();
      await reading;
    },
  };
}

describe("GET /monitor/events", () => {
  let t: TestApp;
  let releases: ReleaseStub;
  let base: string;

  beforeAll(async () => {
    releases = createReleaseStub();
    const stub = await startGithubStub({ routes: [releases.routes] });
    t = await createTestApp("sqlite", { stub, env: { HOSTING_WEBHOOK_SECRET: SECRET } });
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    for (const name of ["acme/rocket", "acme/hook"]) {
      stub.addRepository(name);
      const added = await t.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers: { "x-api-key": TEST_API_KEY },
        payload: { repository: name },
      });
      expect(added.statusCode).toBe(201);
    }
  });
  afterAll(async () => {
    await t.close();
    await t.stub.close();
  });

  it("refuses callers the listing refuses, and clients that do not ask for a stream", async () => {
    expect(
      (await fetch(`${base}/monitor/events`, { headers: { accept: "text/event-stream" } })).status,
    ).toBe(401);
    const plain = await fetch(`${base}/monitor/events`, { headers: { "x-api-key": TEST_API_KEY } });
    expect(plain.status).toBe(406);
    expect(await plain.json()).toEqual({
      error: "This endpoint streams Server-Sent Events: send Accept: text/event-stream",
    });
  });

  it("streams a publication: the plan, each file's bytes up to its size, then the result", async () => {
    releases.addRelease("acme/rocket", {
      tag: "v2.0.0",
      assets: [
        { name: "app.bin", content: { generated: ASSET_BYTES } },
        { name: "notes.txt", content: "release notes" },
        { name: "unused.bin", content: "not declared" },
      ],
      files: { ".delivery.yml": DECLARATION },
    });
    const stream = await openStream(base, { "x-api-key": TEST_API_KEY });
    expect(stream.response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const check = await t.app.inject({
      method: "POST",
      url: "/monitor/check/acme/rocket",
      headers: { "x-api-key": TEST_API_KEY },
    });
    expect(check.statusCode).toBe(200);
    await stream.until((event) => event.type === "release_finished");
    await stream.close();

    const ofRelease = stream.events.filter((event) => "tag" in event && event.tag === "v2.0.0");
    expect(ofRelease[0]).toEqual({
      type: "release_started",
      repository: "acme/rocket",
      tag: "v2.0.0",
      files: [
        { file: "app.bin", expected_bytes: ASSET_BYTES },
        { file: "notes.txt", expected_bytes: 13 },
      ],
      expected_bytes: ASSET_BYTES + 13,
    });
    const progress = ofRelease.filter((event) => event.type === "file_progress");
    const app = progress.filter((event) => event.file === "app.bin");
    // Growing counts, the last one complete and marked done.
    expect(app.map((event) => event.bytes)).toEqual(
      [...app.map((event) => event.bytes)].sort((a, b) => a - b),
    );
    expect(app.at(-1)).toMatchObject({
      bytes: ASSET_BYTES,
      expected_bytes: ASSET_BYTES,
      done: true,
    });
    expect(progress.at(-1)?.release_bytes).toBe(ASSET_BYTES + 13);
    expect(ofRelease.at(-1)).toEqual({
      type: "release_finished",
      repository: "acme/rocket",
      tag: "v2.0.0",
      status: "success",
      trigger: "manual",
      files_count: 2,
      total_bytes: ASSET_BYTES + 13,
      errors: [],
    });
    // Each event is named by its type.
    expect(stream.names).toEqual(stream.events.map((event) => event.type));
  });

  it("shows a publication the webhook triggered, to a session as well", async () => {
    releases.addRelease("acme/hook", {
      tag: "v1.0.0",
      assets: [
        { name: "app.bin", content: "hooked" },
        { name: "notes.txt", content: "notes" },
      ],
      files: { ".delivery.yml": DECLARATION },
    });
    await t.app.inject({
      method: "POST",
      url: "/auth/register",
      payload: { email: "ops@example.com", password: "a long password", name: "Ops" },
    });
    const login = await t.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { email: "ops@example.com", password: "a long password" },
    });
    const stream = await openStream(base, { cookie: `access_token=${login.json().token}` });
    const body = JSON.stringify({
      action: "published",
      release: {
        id: 1,
        tag_name: "v1.0.0",
        name: "v1.0.0",
        draft: false,
        prerelease: false,
        assets: [],
      },
      repository: { id: 5, name: "hook", full_name: "acme/hook", owner: { login: "acme" } },
    });
    const delivered = await t.app.inject({
      method: "POST",
      url: "/webhook/codehost",
      headers: {
        "content-type": "application/json",
        "x-github-event": "release",
        "x-github-delivery": "monitor-1",
        "x-hub-signature-256": signatureOf(SECRET, body),
      },
      payload: body,
    });
    expect(delivered.statusCode).toBe(200);
    const finished = await stream.until((event) => event.type === "release_finished");
    await stream.close();
    expect(finished).toMatchObject({
      repository: "acme/hook",
      tag: "v1.0.0",
      trigger: "webhook",
      status: "success",
    });
  });
});

describe("GET /monitor/events at shutdown", () => {
  it("ends open streams when the app closes, so a shutdown does not wait on them", async () => {
    const other = await createTestApp("sqlite");
    await other.app.listen({ host: "127.0.0.1", port: 0 });
    const address = `http://127.0.0.1:${(other.app.server.address() as AddressInfo).port}`;
    const stream = await openStream(address, { "x-api-key": TEST_API_KEY });
    const started = performance.now();
    await other.close();
    expect(performance.now() - started).toBeLessThan(5_000);
    await stream.close();
  });
});
