import { AppError, createLogging } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WatchedRepositoryStore } from "../../src/repositories/watched-repository-store.js";
import { schedulerRound } from "../../src/scheduler/scheduler-round.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

describe("scheduler round", () => {
  let testDatabase: TestDatabase;
  let repos: WatchedRepositoryStore;
  const logs = new LogCapture();
  const logger = createLogging({ destination: logs, filter: "debug" }).forTarget(
    "delivery::scheduler",
  );

  beforeAll(async () => {
    testDatabase = await createTestDatabase("sqlite");
    repos = new WatchedRepositoryStore((await testDatabase.open()).db);
    const at = "2026-01-15T12:00:00.000Z";
    await repos.add("acme", "first", at);
    const paused = await repos.add("acme", "paused", at);
    await repos.setActive(paused.id, false);
    await repos.add("acme", "broken", at);
    await repos.add("acme", "empty", at);
    await repos.add("acme", "last", at);
  });
  afterAll(() => testDatabase.drop());

  it("checks every active repository in turn, past failures and repositories without releases", async () => {
    const checked: string[] = [];
    const round = schedulerRound({
      repos,
      logger,
      check: async (repository) => {
        checked.push(repository.fullName);
        if (repository.name === "broken") throw new AppError("codehost_unavailable", 502, "down");
        if (repository.name === "empty") throw new AppError("no_release", 404, "no release");
      },
    });
    await round(new AbortController().signal);
    expect(checked).toEqual(["acme/first", "acme/broken", "acme/empty", "acme/last"]);
    const summary = logs.lines.find(
      (line) =>
        (line.fields as { message?: string }).message ===
        "scheduler round checked the active repositories",
    );
    expect(summary?.fields).toMatchObject({ repositories: 4, failed: 1 });
  });

  it("stops before the next repository once shutdown begins", async () => {
    const stopping = new AbortController();
    const checked: string[] = [];
    const round = schedulerRound({
      repos,
      logger,
      check: async (repository) => {
        checked.push(repository.fullName);
        stopping.abort();
      },
    });
    await round(stopping.signal);
    expect(checked).toEqual(["acme/first"]);
  });
});
