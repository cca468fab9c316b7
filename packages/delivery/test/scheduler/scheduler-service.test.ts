import { createLogging } from "@rd/common";
import { LogCapture, makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { startService } from "../../src/main.js";
import { type GithubStub, startGithubStub } from "../fixtures/github-stub.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

// The scheduler as `delivery serve` runs it: started by main.ts after listening, reported by
// the status, stopped at shutdown, and off when SCHEDULER_INTERVAL_MINUTES=0.

const messages = (logs: LogCapture) =>
  logs.lines.map((line) => (line.fields as { message?: string }).message);

describe("the scheduler in the running service", () => {
  let stub: GithubStub;
  let testDatabase: TestDatabase;
  let files: { path: string; remove(): Promise<void> };

  const start = async (interval: string | undefined) => {
    const logs = new LogCapture();
    const config = loadConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      DATABASE_URL: testDatabase.url,
      CODEHOST_API_URL: stub.url,
      LOCAL_STORAGE_DIR: files.path,
      JWT_SECRET: "scheduler-service-test-secret-0123456789",
      ...(interval === undefined ? {} : { SCHEDULER_INTERVAL_MINUTES: interval }),
    });
    const service = await startService(config, {
      logging: createLogging({ destination: logs, filter: "info" }),
    });
    const status = async () => {
      const body = (await (await fetch(`${service.address}/monitor/status`)).json()) as {
        scheduler: unknown;
      };
      return body.scheduler;
    };
    return { service, logs, status };
  };

  beforeAll(async () => {
    stub = await startGithubStub();
    testDatabase = await createTestDatabase("sqlite");
    files = await makeTempDir("rd-scheduler-service-");
  });
  afterAll(async () => {
    await testDatabase.drop();
    await stub.close();
    await files.remove();
  });

  it("runs by default every 10 minutes, with a first round at start, until the service stops", async () => {
    const started = Date.now();
    const { service, logs, status } = await start(undefined);
    const answered = Date.now();
    const scheduler = (await status()) as { next_round_at: string };
    expect(scheduler).toEqual({
      running: true,
      interval_minutes: 10,
      next_round_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    // The first round ran at start; the next is one interval after it.
    const next = Date.parse(scheduler.next_round_at);
    expect(next).toBeGreaterThanOrEqual(started + 10 * 60_000);
    expect(next).toBeLessThanOrEqual(answered + 10 * 60_000);
    await expect
      .poll(() => messages(logs), { timeout: 10_000 })
      .toContain("scheduler round finished");
    await service.stop();
    expect(messages(logs)).toContain("scheduler stopped");
  });

  it("stays off with SCHEDULER_INTERVAL_MINUTES=0", async () => {
    const { service, logs, status } = await start("0");
    expect(await status()).toEqual({ running: false, interval_minutes: 0, next_round_at: null });
    await service.stop();
    expect(messages(logs)).toContain("scheduler off (SCHEDULER_INTERVAL_MINUTES=0)");
    expect(messages(logs)).not.toContain("scheduler round started");
  });
});
