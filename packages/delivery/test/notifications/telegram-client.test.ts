import { createServer } from "node:net";
import { createLogging } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TelegramClient } from "../../src/notifications/telegram-client.js";
import { startTelegramStub, type TelegramStub } from "../fixtures/telegram-stub.js";

const TOKEN = "123456:AAE-secret-bot-token";

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

describe("Telegram client", () => {
  let stub: TelegramStub;
  let logs: LogCapture;

  const client = (overrides: { apiUrl?: string; botToken?: string; timeoutMs?: number } = {}) =>
    new TelegramClient({
      apiUrl: overrides.apiUrl ?? stub.url,
      botToken: overrides.botToken ?? TOKEN,
      chatId: "-100200300",
      logger: createLogging({ destination: logs, filter: "trace" }).forTarget("delivery::telegram"),
      ...(overrides.timeoutMs ? { timeoutMs: overrides.timeoutMs } : {}),
    });

  const logText = () => JSON.stringify(logs.lines);

  beforeAll(async () => {
    stub = await startTelegramStub(TOKEN);
  });
  afterAll(() => stub.close());
  beforeEach(() => {
    logs = new LogCapture();
    stub.messages.length = 0;
    stub.delayMs = 0;
  });

  it("posts the text to the configured chat through the bot's sendMessage", async () => {
    await client().send("Release v1.2.0 of acme/widget published");
    expect(stub.messages).toEqual([
      { token: TOKEN, chat_id: "-100200300", text: "Release v1.2.0 of acme/widget published" },
    ]);
  });

  it("shortens a text beyond the Bot API's 4096 characters", async () => {
    await client().send("x".repeat(5_000));
    expect(stub.messages[0]?.text).toHaveLength(4_096);
  });

  it("reports a server error as unavailable without the token in the error or the log", async () => {
    stub.failNext(1, 500);
    const error = await client()
      .send("hello")
      .catch((e: Error) => e);
    expect(error).toMatchObject({ code: "telegram_unavailable", status: 503 });
    expect((error as Error).message).toContain("500");
    expect((error as Error).message).not.toContain(TOKEN);
    expect(logText()).toContain("telegram refused the message");
    expect(logText()).not.toContain(TOKEN);
  });

  it("reports a wrong bot token as refused (401) without writing either token anywhere", async () => {
    const wrong = "999:wrong-token";
    const error = await client({ botToken: wrong })
      .send("hello")
      .catch((e: Error) => e);
    expect((error as Error).message).toBe("Telegram refused the message: 401 Unauthorized");
    expect(logText()).not.toContain(wrong);
    expect(stub.messages).toHaveLength(0);
  });

  it("reports an unreachable Bot API without the URL", async () => {
    const apiUrl = `http://127.0.0.1:${await closedPort()}`;
    const error = await client({ apiUrl })
      .send("hello")
      .catch((e: Error) => e);
    expect((error as Error).message).toBe("Telegram could not be reached (ECONNREFUSED)");
    expect(logText()).not.toContain(TOKEN);
  });

  it("gives up on a Bot API slower than its timeout", async () => {
    const botApiDelayMs = 10_000;
    stub.delayMs = botApiDelayMs;
    const started = Date.now();
    const error = await client({ timeoutMs: 100 })
      .send("hello")
      .catch((e: Error) => e);
    expect(Date.now() - started).toBeLessThan(botApiDelayMs / 2);
    expect((error as Error).message).toBe("Telegram could not be reached (timed out)");
  });
});
