import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signatureOf } from "../../src/webhooks/webhook-signature.js";
import { startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";
import { createReleaseStub, type ReleaseStub } from "../releases/release-stub.js";

const SECRET = "webhook-secret-for-tests";

const DECLARATION = `
version: 2.0
artifacts:
  - source: tool-linux
    destination: bin/tool-{version}-linux
    type: binary
    latest: true
    versioned: true
storage:
  provider: local
  bucket: public
`;

let deliveries = 0;

/** A release event payload as the code host sends it (trimmed to realistic essentials). */
function releasePayload(fullName: string, tag: string, action: string, draft = false) {
  const [owner = "", name = ""] = fullName.split("/");
  return {
    action,
    release: { id: 77, tag_name: tag, name: tag, draft, prerelease: false, assets: [] },
    repository: { id: 5, name, full_name: fullName, owner: { login: owner } },
    sender: { login: owner },
  };
}

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`webhook receiver (${dialect})`, () => {
    let t: TestApp;
    let releases: ReleaseStub;

    /** Posts a delivery: signed with the secret unless a signature is given (null: none). */
    async function deliver(
      event: string,
      payload: unknown,
      options: { signature?: string | null; raw?: string; delivery?: string } = {},
    ) {
      const body = options.raw ?? JSON.stringify(payload);
      const signature =
        options.signature === undefined ? signatureOf(SECRET, body) : options.signature;
      return t.app.inject({
        method: "POST",
        url: "/webhook/codehost",
        headers: {
          "content-type": "application/json",
          "x-github-event": event,
          "x-github-delivery": options.delivery ?? `delivery-${++deliveries}`,
          ...(signature === null ? {} : { "x-hub-signature-256": signature }),
        },
        payload: body,
      });
    }

    /** Registers `fullName` (stub + API) with one release carrying one declared asset. */
    async function registered(fullName: string, tag: string) {
      t.stub.addRepository(fullName);
      releases.addRelease(fullName, {
        tag,
        assets: [{ name: "tool-linux", content: `binary of ${tag}` }],
        files: { ".delivery.yml": DECLARATION },
      });
      const response = await t.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers: { "x-api-key": TEST_API_KEY },
        payload: { repository: fullName },
      });
      expect(response.statusCode).toBe(201);
      return response.json().repository as { id: number };
    }

    const assetDownloads = () =>
      t.stub.state.requests.filter((r) => r.path.includes("/releases/assets/")).length;

    beforeAll(async () => {
      releases = createReleaseStub();
      const stub = await startGithubStub({ routes: [releases.routes] });
      t = await createTestApp(dialect, { stub, env: { HOSTING_WEBHOOK_SECRET: SECRET } });
    });
    afterAll(async () => {
      await t.close();
      await t.stub.close();
    });

    it("answers a signed ping with pong", async () => {
      const response = await deliver("ping", { zen: "Keep it logically awesome.", hook_id: 1 });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ success: true, message: "pong" });
    });

    it("refuses a delivery without a signature, with a wrong one, or with another body", async () => {
      const payload = { zen: "hello" };
      const missing = await deliver("ping", payload, { signature: null });
      expect(missing.statusCode).toBe(401);
      expect(missing.json()).toEqual({ error: "Invalid signature" });

      const wrong = await deliver("ping", payload, {
        signature: signatureOf("not the secret", "{}"),
      });
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json()).toEqual({ error: "Invalid signature" });

      // Signed compact, sent with spaces: the same JSON, not the same bytes.
      const compact = JSON.stringify(payload);
      const spaced = JSON.stringify(payload, null, 2);
      const reformatted = await deliver("ping", payload, {
        raw: spaced,
        signature: signatureOf(SECRET, compact),
      });
      expect(reformatted.statusCode).toBe(401);
    });

    it("checks the signature before anything else, even an unregistered repository or bad JSON", async () => {
      const payload = releasePayload("ghost/none", "v1.0.0", "published");
      const unsigned = await deliver("release", payload, { signature: "sha256=00" });
      expect(unsigned.statusCode).toBe(401);
      const garbage = await deliver("release", null, { raw: "{not json", signature: "sha256=00" });
      expect(garbage.statusCode).toBe(401);
      const signedGarbage = await deliver("release", null, { raw: "{not json" });
      expect(signedGarbage.statusCode).toBe(400);
    });

    it("ignores events other than release, and release actions other than published/released/created", async () => {
      const push = await deliver("push", { ref: "refs/heads/main" });
      expect(push.statusCode).toBe(200);
      expect(push.json()).toEqual({
        success: true,
        ignored: true,
        reason: "event push is not handled",
      });
      const deleted = await deliver("release", releasePayload("acme/any", "v1", "deleted"));
      expect(deleted.json()).toEqual({
        success: true,
        ignored: true,
        reason: "release action deleted is not handled",
      });
    });

    it("answers 404 for a repository that is not registered", async () => {
      const response = await deliver(
        "release",
        releasePayload("ghost/none", "v1.0.0", "published"),
      );
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        error: "Repository ghost/none is not registered in the database",
      });
    });

    it.each([
      ["a lone surrogate", "acme/surrogate", "v1.0.0-\ud800"],
      ["100,000 characters", "acme/longtag", "v".repeat(100_000)],
      ["a space", "acme/spaced", "v1.0.0 beta"],
      ["a control character", "acme/control", "v1.0.0\u0000"],
      ["a .. part", "acme/dotted", "v1/../v2"],
    ])(
      "answers 400 to a release event whose tag holds %s, without asking the code host",
      async (_case, fullName, tag) => {
        await registered(fullName, "v1.0.0");
        const before = t.stub.state.requests.length;
        const response = await deliver("release", releasePayload(fullName, tag, "published"));
        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual({ error: expect.stringMatching(/^Invalid release tag: /) });
        // The code host was not asked, so nothing was retried either (that tag once took 38 s).
        expect(t.stub.state.requests.length).toBe(before);
      },
    );

    it("ignores a draft without touching the code host", async () => {
      await registered("acme/drafty", "v0.9.0");
      const before = t.stub.state.requests.length;
      const response = await deliver(
        "release",
        releasePayload("acme/drafty", "v0.9.0", "created", true),
      );
      expect(response.json()).toEqual({ success: true, ignored: true, reason: "draft" });
      expect(t.stub.state.requests.length).toBe(before);
    });

    it("processes a published release, records it as a webhook run, and ignores its replay", async () => {
      await registered("acme/tool", "v1.2.0");
      const payload = releasePayload("acme/tool", "v1.2.0", "published");
      const first = await deliver("release", payload, { delivery: "guid-published-1" });
      expect(first.statusCode).toBe(200);
      const body = first.json();
      expect(body.success).toBe(true);
      expect(body.result).toMatchObject({
        repository: "acme/tool",
        tag: "v1.2.0",
        errors: [],
        processed: [
          {
            file: "tool-linux",
            size: "binary of v1.2.0".length,
            versioned_url: "http://delivery.test/files/public/tool/1.2.0/bin/tool-1.2.0-linux",
            latest_url: "http://delivery.test/files/public/tool/latest/bin/tool-latest-linux",
          },
        ],
      });

      const history = await t.app.inject({
        method: "GET",
        url: "/monitor/history/acme/tool",
        headers: { "x-api-key": TEST_API_KEY },
      });
      expect(history.json().history).toMatchObject([
        { tag: "v1.2.0", status: "success", trigger: "webhook" },
      ]);

      // The same delivery sent again (GitHub's "Redeliver"), then the next action of the release.
      const replay = await deliver("release", payload, { delivery: "guid-published-1" });
      expect(replay.json()).toEqual({ success: true, ignored: true, reason: "already_processed" });
      const released = await deliver("release", releasePayload("acme/tool", "v1.2.0", "released"));
      expect(released.json()).toEqual({
        success: true,
        ignored: true,
        reason: "already_processed",
      });
      const after = await t.app.inject({
        method: "GET",
        url: "/monitor/history/acme/tool",
        headers: { "x-api-key": TEST_API_KEY },
      });
      expect(after.json().history).toHaveLength(1);
    });

    it("processes a release once when its created, published and released deliveries arrive together", async () => {
      await registered("acme/burst", "v2.0.0");
      const downloadsBefore = assetDownloads();
      const answers = await Promise.all(
        ["created", "published", "released"].map((action) =>
          deliver("release", releasePayload("acme/burst", "v2.0.0", action)),
        ),
      );
      const bodies = answers.map((answer) => answer.json());
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
      expect(bodies.filter((body) => body.result !== undefined)).toHaveLength(1);
      expect(bodies.filter((body) => body.reason === "already_processed")).toHaveLength(2);
      expect(assetDownloads() - downloadsBefore).toBe(1);

      const notifications = await t.app.inject({
        method: "GET",
        url: "/monitor/notifications",
        headers: { "x-api-key": TEST_API_KEY },
      });
      const forBurst = notifications
        .json()
        .notifications.filter((n: { repository: string }) => n.repository === "acme/burst");
      expect(forBurst).toMatchObject([
        { type: "release_processed", tag: "v2.0.0", delivered: false },
      ]);
    });

    it("ignores deliveries for a repository switched off", async () => {
      const { id } = await registered("acme/paused", "v1.0.0");
      await t.app.inject({
        method: "PATCH",
        url: `/monitor/repositories/${id}`,
        headers: { "x-api-key": TEST_API_KEY },
        payload: { active: false },
      });
      const response = await deliver(
        "release",
        releasePayload("acme/paused", "v1.0.0", "published"),
      );
      expect(response.json()).toEqual({
        success: true,
        ignored: true,
        reason: "repository_inactive",
      });
    });
  });
}

describe("webhook receiver without HOSTING_WEBHOOK_SECRET", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp("sqlite");
  });
  afterAll(() => t.close());

  it("refuses every delivery, whatever it is signed with", async () => {
    for (const secret of ["", "anything"]) {
      const body = JSON.stringify({ zen: "hi" });
      const response = await t.app.inject({
        method: "POST",
        url: "/webhook/codehost",
        headers: {
          "content-type": "application/json",
          "x-github-event": "ping",
          "x-hub-signature-256": signatureOf(secret, body),
        },
        payload: body,
      });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ error: "Invalid signature" });
    }
  });
});
