import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startGithubStub } from "../fixtures/github-stub.js";
import { startTelegramStub, type TelegramStub } from "../fixtures/telegram-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";
import { createReleaseStub, type ReleaseStub } from "../releases/release-stub.js";

const BOT_TOKEN = "777000:routes-test-bot-token";
const CHAT_ID = "-100555";
const asApiKey = { "x-api-key": TEST_API_KEY };

const DECLARATION = `
version: 2.0
artifacts:
  - source: app.bin
    destination: app-{version}.bin
    type: binary
    latest: true
    versioned: true
docs:
  - source: README.md
    destination: README.md
    latest: true
    versioned: false
storage:
  provider: local
  bucket: public
  folder_name: app
`;

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`notifications (${dialect})`, () => {
    // Each test gets its own app, database, code host and Telegram: none depends on another's.
    let t: TestApp;
    let telegram: TelegramStub;
    let releases: ReleaseStub;

    const list = async (query = "") =>
      (
        await t.app.inject({
          method: "GET",
          url: `/monitor/notifications${query}`,
          headers: asApiKey,
        })
      ).json();

    /** Registers the repository with one release and checks it through the API. */
    async function checkRelease(fullName: string, tag: string, files: Record<string, string>) {
      t.stub.addRepository(fullName);
      releases.addRelease(fullName, { tag, assets: [{ name: "app.bin", content: "bits" }], files });
      await t.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers: asApiKey,
        payload: { repository: fullName },
      });
      const [owner, name] = fullName.split("/");
      const response = await t.app.inject({
        method: "POST",
        url: `/monitor/check/${owner}/${name}`,
        headers: asApiKey,
      });
      expect(response.statusCode).toBe(200);
    }

    /** Stores the notification of a published release `tag` of `acme/app`, as processing does. */
    const recordRelease = (tag: string) =>
      t.services.notifications.releaseRecorded({
        repository: "acme/app",
        tag,
        status: "success",
        files_count: 1,
        errors: [],
        trigger: "manual",
      });

    /** The stored notification of a tag once its background send is over, taken or refused. */
    async function notificationOf(tag: string) {
      await t.services.notifications.drain();
      return (await list()).notifications.find((n: { tag: string }) => n.tag === tag);
    }

    beforeEach(async () => {
      telegram = await startTelegramStub(BOT_TOKEN);
      releases = createReleaseStub();
      const stub = await startGithubStub({ routes: [releases.routes] });
      t = await createTestApp(dialect, {
        stub,
        env: {
          TELEGRAM_BOT_TOKEN: BOT_TOKEN,
          TELEGRAM_CHAT_ID: CHAT_ID,
          TELEGRAM_API_URL: telegram.url,
        },
      });
    });
    afterEach(async () => {
      await t.close();
      await t.stub.close();
      await telegram.close();
    });

    it("a processed release is stored and sent to Telegram naming the repository and the tag", async () => {
      await checkRelease("acme/app", "v1.0.0", {
        ".delivery.yml": DECLARATION,
        "README.md": "# App",
      });
      const notification = await notificationOf("v1.0.0");
      expect(notification).toEqual({
        id: expect.any(Number),
        type: "release_processed",
        repository: "acme/app",
        tag: "v1.0.0",
        message: expect.stringContaining("acme/app"),
        delivered: true,
        created_at: expect.any(String),
      });
      expect(telegram.messages).toEqual([
        { token: BOT_TOKEN, chat_id: CHAT_ID, text: notification.message },
      ]);
      expect(notification.message).toContain("v1.0.0");
    });

    it("a partial release (a doc missing) and a failed one (no declaration) are notified too", async () => {
      await checkRelease("acme/partial", "v2.0.0", { ".delivery.yml": DECLARATION });
      await checkRelease("acme/failing", "v3.0.0", {});
      expect(await notificationOf("v2.0.0")).toMatchObject({
        type: "release_partial",
        repository: "acme/partial",
        delivered: true,
      });
      expect(await notificationOf("v3.0.0")).toMatchObject({
        type: "release_failed",
        repository: "acme/failing",
        delivered: true,
      });
    });

    it("a send Telegram refuses is recorded as not delivered; publishing is unaffected", async () => {
      telegram.failNext(1, 500);
      await checkRelease("acme/refused", "v4.0.0", {
        ".delivery.yml": DECLARATION,
        "README.md": "x",
      });
      const notification = await notificationOf("v4.0.0");
      // Telegram was asked once, and refused.
      expect(telegram.paths).toEqual([`/bot${BOT_TOKEN}/sendMessage`]);
      expect(telegram.messages).toEqual([]);
      expect(notification).toMatchObject({ type: "release_processed", delivered: false });
      expect(t.logs.forTarget("delivery::telegram")).toContainEqual(
        expect.objectContaining({
          level: "WARN",
          fields: expect.objectContaining({
            message: "telegram refused the message",
            status: 500,
            description: "Internal Server Error",
          }),
        }),
      );
    });

    it("lists newest first with the total, honouring limit", async () => {
      for (const tag of ["v1.0.0", "v2.0.0", "v3.0.0", "v4.0.0"]) {
        await recordRelease(tag);
        t.clock.advance(1_000);
      }
      const all = await list();
      expect(all.total).toBe(4);
      expect(all.notifications.map((n: { tag: string }) => n.tag)).toEqual([
        "v4.0.0",
        "v3.0.0",
        "v2.0.0",
        "v1.0.0",
      ]);
      const two = await list("?limit=2");
      expect(two.notifications.map((n: { tag: string }) => n.tag)).toEqual(["v4.0.0", "v3.0.0"]);
      expect(two.total).toBe(4);
      const bad = await t.app.inject({
        method: "GET",
        url: "/monitor/notifications?limit=0",
        headers: asApiKey,
      });
      expect(bad.statusCode).toBe(400);
    });

    it("deletes one by id, then answers 404 for it", async () => {
      await recordRelease("v1.0.0");
      await recordRelease("v2.0.0");
      const [newest] = (await list()).notifications;
      const url = `/monitor/notifications/${newest.id}`;
      const deleted = await t.app.inject({ method: "DELETE", url, headers: asApiKey });
      expect(deleted.statusCode).toBe(200);
      expect(deleted.json()).toEqual({ success: true });
      expect((await list()).notifications.map((n: { tag: string }) => n.tag)).toEqual(["v1.0.0"]);
      const again = await t.app.inject({ method: "DELETE", url, headers: asApiKey });
      expect(again.statusCode).toBe(404);
      expect(again.json()).toEqual({ error: `Notification ${newest.id} not found` });
    });

    it("cleans up by age: nothing is 30 days old yet, everything is older than 0 days", async () => {
      for (const tag of ["v1.0.0", "v2.0.0", "v3.0.0"]) await recordRelease(tag);
      t.clock.advance(1_000);
      const byDefault = await t.app.inject({
        method: "POST",
        url: "/monitor/notifications/cleanup",
        headers: asApiKey,
      });
      expect(byDefault.json()).toEqual({ success: true, deleted: 0 });
      const all = await t.app.inject({
        method: "POST",
        url: "/monitor/notifications/cleanup",
        headers: asApiKey,
        payload: { older_than_days: 0 },
      });
      expect(all.json()).toEqual({ success: true, deleted: 3 });
      expect((await list()).total).toBe(0);
    });

    it("sends a test message, and answers 503 when Telegram refuses it", async () => {
      const ok = await t.app.inject({
        method: "POST",
        url: "/monitor/telegram/test",
        headers: asApiKey,
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual({ success: true });
      expect(telegram.messages).toHaveLength(1);
      telegram.failNext(1, 401);
      const refused = await t.app.inject({
        method: "POST",
        url: "/monitor/telegram/test",
        headers: asApiKey,
      });
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toEqual({ error: "Telegram refused the message: 401 Unauthorized" });
    });

    it("keeps the bot token out of every log line", async () => {
      // A send taken, a send refused and a refused test message: every path that logs.
      await recordRelease("v1.0.0");
      telegram.failNext(2, 401);
      await recordRelease("v2.0.0");
      await t.services.notifications.drain();
      await t.app.inject({ method: "POST", url: "/monitor/telegram/test", headers: asApiKey });
      const telegramLines = t.logs.forTarget("delivery::telegram");
      expect(telegramLines.length).toBeGreaterThanOrEqual(2);
      expect(telegram.paths).toHaveLength(3);
      expect(JSON.stringify(t.logs.lines)).not.toContain(BOT_TOKEN);
    });

    it("listing needs credentials; changes and the channel test need the API key", async () => {
      const anonymous = await t.app.inject({ method: "GET", url: "/monitor/notifications" });
      expect(anonymous.statusCode).toBe(401);

      const user = { email: "ops@example.test", password: "correct horse battery", name: "Ops" };
      await t.app.inject({
        method: "POST",
        url: "/auth/register",
        headers: asApiKey,
        payload: user,
      });
      const login = await t.app.inject({ method: "POST", url: "/auth/login", payload: user });
      const asUser = { authorization: `Bearer ${login.json().token}` };
      const listed = await t.app.inject({
        method: "GET",
        url: "/monitor/notifications",
        headers: asUser,
      });
      expect(listed.statusCode).toBe(200);
      for (const [method, url] of [
        ["POST", "/monitor/notifications/cleanup"],
        ["DELETE", "/monitor/notifications/1"],
        ["POST", "/monitor/telegram/test"],
      ] as const) {
        const response = await t.app.inject({ method, url, headers: asUser });
        expect(response.statusCode).toBe(403);
        expect(response.json()).toEqual({ error: "API key required" });
      }

      for (const [method, url] of [
        ["POST", "/monitor/notifications/cleanup"],
        ["DELETE", "/monitor/notifications/1"],
        ["POST", "/monitor/telegram/test"],
      ] as const) {
        const response = await t.app.inject({ method, url });
        expect(response.statusCode).toBe(401);
      }
    });
  });
}

describe("Telegram test without Telegram configured", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp("sqlite");
  });
  afterAll(() => t.close());

  it("answers 503 naming the missing configuration", async () => {
    const response = await t.app.inject({
      method: "POST",
      url: "/monitor/telegram/test",
      headers: asApiKey,
    });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      error: "Telegram is not configured (TELEGRAM_BOT_TOKEN, TELEGRAM_CHAT_ID)",
    });
  });
});
