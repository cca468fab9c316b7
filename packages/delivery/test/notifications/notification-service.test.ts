import { createServer } from "node:net";
import { createLogging } from "@rd/common";
import { LogCapture, ManualClock } from "@rd/common/test-kit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.js";
import { NotificationRepository } from "../../src/notifications/notification-repository.js";
import { NotificationService } from "../../src/notifications/notification-service.js";
import type { ReleaseOutcome } from "../../src/notifications/release-message.js";
import { TelegramClient } from "../../src/notifications/telegram-client.js";
import { startTelegramStub, type TelegramStub } from "../fixtures/telegram-stub.js";
import {
  createTestDatabase,
  DIALECTS,
  dialectAvailable,
  type TestDatabase,
} from "../helpers/test-database.js";

const TOKEN = "424242:notification-service-token";
const CHAT = "-1001234";

const outcome = (tag: string, status: ReleaseOutcome["status"] = "success"): ReleaseOutcome => ({
  repository: "acme/widget",
  tag,
  status,
  files_count: 2,
  errors: status === "success" ? [] : ["artifact app.zip: no such asset in release"],
  trigger: "scheduler",
});

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`notification service (${dialect})`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    let stub: TelegramStub;
    let logs: LogCapture;
    const clock = new ManualClock();

    const service = (channel: { apiUrl?: string; timeoutMs?: number } | null) => {
      const logging = createLogging({ destination: logs, filter: "trace" });
      const telegram =
        channel === null
          ? null
          : new TelegramClient({
              apiUrl: channel.apiUrl ?? stub.url,
              botToken: TOKEN,
              chatId: CHAT,
              logger: logging.forTarget("delivery::telegram"),
              ...(channel.timeoutMs ? { timeoutMs: channel.timeoutMs } : {}),
            });
      return new NotificationService(
        new NotificationRepository(database.db),
        telegram,
        clock,
        logging.forTarget("delivery::notifications"),
      );
    };

    beforeAll(async () => {
      testDatabase = await createTestDatabase(dialect);
      database = await testDatabase.open();
      stub = await startTelegramStub(TOKEN);
    });
    afterAll(async () => {
      await stub.close();
      await testDatabase.drop();
    });
    beforeEach(async () => {
      logs = new LogCapture();
      stub.messages.length = 0;
      stub.delayMs = 0;
      await database.db.deleteFrom("notifications").execute();
    });

    it("stores each outcome and sends it to the chat, then marks it delivered", async () => {
      const notifications = service({});
      await notifications.releaseRecorded(outcome("v1.0.0"));
      await notifications.releaseRecorded(outcome("v1.1.0", "partial"));
      await notifications.releaseRecorded(outcome("v1.2.0", "failed"));
      await notifications.drain();

      const [list, total] = await notifications.list(10);
      expect(total).toBe(3);
      expect(list.map((n) => [n.type, n.tag, n.delivered])).toEqual([
        ["release_failed", "v1.2.0", true],
        ["release_partial", "v1.1.0", true],
        ["release_processed", "v1.0.0", true],
      ]);
      expect(stub.messages.map((m) => m.chat_id)).toEqual([CHAT, CHAT, CHAT]);
      for (const tag of ["v1.0.0", "v1.1.0", "v1.2.0"]) {
        const message = stub.messages.find((m) => m.text.includes(tag));
        expect(message?.text).toContain("acme/widget");
      }
      expect(list[0]?.message).toBe(stub.messages.find((m) => m.text.includes("v1.2.0"))?.text);
    });

    it.each([500, 401])(
      "records a send the Bot API answers %i to as not delivered",
      async (status) => {
        const notifications = service({});
        stub.failNext(1, status);
        await notifications.releaseRecorded(outcome("v2.0.0"));
        await notifications.drain();
        const [list] = await notifications.list(10);
        expect(list).toMatchObject([{ tag: "v2.0.0", delivered: false }]);
        expect(JSON.stringify(logs.lines)).not.toContain(TOKEN);
      },
    );

    it("records a send to an unreachable Bot API as not delivered", async () => {
      const notifications = service({ apiUrl: `http://127.0.0.1:${await unusedPort()}` });
      await notifications.releaseRecorded(outcome("v2.1.0"));
      await notifications.drain();
      expect((await notifications.list(10))[0]).toMatchObject([{ delivered: false }]);
    });

    it("does not wait for a slow Bot API: the outcome is stored at once, the send gives up", async () => {
      // Bounds are far below the Bot API's delay, so a busy machine cannot blur the claim.
      const botApiDelayMs = 10_000;
      stub.delayMs = botApiDelayMs;
      const notifications = service({ timeoutMs: 150 });
      const started = Date.now();
      await notifications.releaseRecorded(outcome("v2.2.0"));
      expect(Date.now() - started).toBeLessThan(botApiDelayMs / 5);
      expect(await notifications.list(10)).toMatchObject([
        [{ tag: "v2.2.0", delivered: false }],
        1,
      ]);
      await notifications.drain();
      expect(Date.now() - started).toBeLessThan(botApiDelayMs / 2);
      expect((await notifications.list(10))[0]).toMatchObject([{ delivered: false }]);
    });

    it("without Telegram, stores outcomes as not delivered and refuses the test message", async () => {
      const notifications = service(null);
      await notifications.releaseRecorded(outcome("v3.0.0"));
      expect((await notifications.list(10))[0]).toMatchObject([{ delivered: false }]);
      await expect(notifications.sendTest()).rejects.toMatchObject({
        status: 503,
        message: "Telegram is not configured (TELEGRAM_BOT_TOKEN, TELEGRAM_CHAT_ID)",
      });
      expect(stub.messages).toHaveLength(0);
    });

    it("sends a test message, and reports a refusal as unavailable", async () => {
      const notifications = service({});
      await notifications.sendTest();
      expect(stub.messages).toHaveLength(1);
      stub.failNext(1, 401);
      await expect(notifications.sendTest()).rejects.toMatchObject({ status: 503 });
    });

    it("cleans up notifications older than 30 days by default, or the days given", async () => {
      const notifications = service(null);
      const at = (iso: string) => new ManualClock(new Date(iso));
      for (const [tag, when] of [
        ["old", "2025-11-01T00:00:00.000Z"],
        ["month", "2025-12-20T00:00:00.000Z"],
        ["new", "2026-01-15T00:00:00.000Z"],
      ] as const) {
        await new NotificationService(
          new NotificationRepository(database.db),
          null,
          at(when),
          createLogging({ destination: logs }).forTarget("t"),
        ).releaseRecorded(outcome(tag));
      }
      // The service's clock reads 2026-01-15T12:00Z.
      expect(await notifications.cleanup()).toBe(1);
      expect(await notifications.cleanup(7)).toBe(1);
      expect((await notifications.list(10))[0].map((n) => n.tag)).toEqual(["new"]);
      expect(await notifications.remove((await notifications.list(1))[0][0]?.id ?? 0)).toBe(true);
    });
  });
}
