import { createLogging, systemClock } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WatchedRepositoryStore } from "../../src/repositories/watched-repository-store.js";
import { buildReleaseScheduler } from "../../src/scheduler/build-scheduler.js";
import type { ReleaseScheduler } from "../../src/scheduler/release-scheduler.js";
import { type GithubStub, startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import {
  createTestDatabase,
  DIALECTS,
  dialectAvailable,
  type TestDatabase,
} from "../helpers/test-database.js";
import { createReleaseStub, type ReleaseStub } from "../releases/release-stub.js";

/** Short enough for several rounds per second; the service's own unit is minutes. */
const INTERVAL_MS = 100;

const DECLARATION = `
version: 2.0
artifacts:
  - source: cli
    destination: cli-{version}
    type: binary
    latest: true
    versioned: true
storage:
  provider: local
  bucket: public
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The scheduler of a test app, wired as main.ts wires it, logging into `logs`. */
function schedulerOf(t: TestApp, logs: LogCapture): ReleaseScheduler {
  return buildReleaseScheduler({
    intervalMs: INTERVAL_MS,
    db: t.database.db,
    // Rounds are slots of real time: the app's hand-moved clock would never reach the next one.
    clock: systemClock,
    logging: createLogging({ destination: logs, filter: "debug" }),
    state: t.scheduler,
    repos: new WatchedRepositoryStore(t.database.db),
    check: (repository) => t.services.releases.checkRepository(repository, "scheduler"),
  });
}

async function register(t: TestApp, fullName: string) {
  const response = await t.app.inject({
    method: "POST",
    url: "/monitor/repositories",
    headers: { "x-api-key": TEST_API_KEY },
    payload: { repository: fullName },
  });
  expect(response.statusCode).toBe(201);
}

async function historyOf(t: TestApp) {
  const response = await t.app.inject({
    method: "GET",
    url: "/monitor/history",
    headers: { "x-api-key": TEST_API_KEY },
  });
  return response.json().history as Array<{ repository: string; tag: string; trigger: string }>;
}

async function until(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(20);
  }
}

function roundsIn(logs: LogCapture): string[] {
  return logs.lines
    .filter((line) => (line.fields as { message?: string }).message === "scheduler round started")
    .map((line) => String((line.fields as { round?: string }).round));
}

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(
    `release scheduler end to end (${dialect})`,
    () => {
      let releases: ReleaseStub;
      let stub: GithubStub;
      let t: TestApp;
      let scheduler: ReleaseScheduler;
      const logs = new LogCapture();

      beforeAll(async () => {
        releases = createReleaseStub();
        stub = await startGithubStub({ routes: [releases.routes] });
        t = await createTestApp(dialect, { stub });
        scheduler = schedulerOf(t, logs);
      });
      afterAll(async () => {
        await scheduler.stop();
        await t.close();
        await stub.close();
      });

      it("publishes a release that appears on the code host, with no API call, and reports itself running", async () => {
        stub.addRepository("acme/cli");
        releases.addRelease("acme/cli", {
          tag: "v1.0.0",
          assets: [{ name: "cli", content: "one" }],
          files: { ".delivery.yml": DECLARATION },
        });
        await register(t, "acme/cli");
        scheduler.start();

        const status = await t.app.inject({ method: "GET", url: "/monitor/status" });
        expect(status.json().scheduler).toEqual({
          running: true,
          interval_minutes: 10,
          next_round_at: expect.any(String),
        });

        await until(async () => (await historyOf(t)).length === 1);
        releases.addRelease("acme/cli", {
          tag: "v1.1.0",
          createdAt: new Date(Date.now() + 60_000).toISOString(),
          assets: [{ name: "cli", content: "two" }],
          files: { ".delivery.yml": DECLARATION },
        });
        await until(async () => (await historyOf(t)).length === 2);

        const history = await historyOf(t);
        expect(history.map((record) => [record.tag, record.trigger])).toEqual([
          ["v1.1.0", "scheduler"],
          ["v1.0.0", "scheduler"],
        ]);
        // Later rounds skip what is processed: still two records after a few more rounds.
        const rounds = roundsIn(logs).length;
        await until(async () => roundsIn(logs).length >= rounds + 3);
        expect(await historyOf(t)).toHaveLength(2);
        const published = await t.app.inject({
          method: "GET",
          url: "/monitor/notifications",
          headers: { "x-api-key": TEST_API_KEY },
        });
        expect(published.json().total).toBe(2);
      });

      it("stops, and the status says so", async () => {
        await scheduler.stop();
        const status = await t.app.inject({ method: "GET", url: "/monitor/status" });
        expect(status.json().scheduler).toMatchObject({ running: false, next_round_at: null });
      });
    },
  );

  describe.skipIf(!(await dialectAvailable(dialect)))(
    `two instances on one database (${dialect})`,
    () => {
      let testDatabase: TestDatabase;
      let releases: ReleaseStub;
      const instances: Array<{ t: TestApp; scheduler: ReleaseScheduler; logs: LogCapture }> = [];

      beforeAll(async () => {
        testDatabase = await createTestDatabase(dialect);
        releases = createReleaseStub();
        for (let i = 0; i < 2; i++) {
          // Each instance has its own GitHub stub server; both serve the same releases.
          const stub = await startGithubStub({ routes: [releases.routes] });
          for (const name of ["acme/one", "acme/two", "acme/three"]) stub.addRepository(name);
          const t = await createTestApp(dialect, { stub, testDatabase });
          const logs = new LogCapture();
          instances.push({ t, scheduler: schedulerOf(t, logs), logs });
        }
      });
      afterAll(async () => {
        for (const { t, scheduler } of instances) {
          await scheduler.stop();
          await t.close();
          await t.stub.close();
        }
        await testDatabase.drop();
      });

      it("never runs a round on both, and never processes a release twice", async () => {
        const [first, second] = instances;
        if (!first || !second) throw new Error("two instances expected");
        for (const name of ["acme/one", "acme/two", "acme/three"]) {
          await register(first.t, name);
          releases.addRelease(name, {
            tag: "v1.0.0",
            assets: [{ name: "cli", content: `${name} v1` }],
            files: { ".delivery.yml": DECLARATION },
          });
        }
        first.scheduler.start();
        await sleep(INTERVAL_MS / 2);
        second.scheduler.start();

        await until(async () => (await historyOf(first.t)).length === 3);
        for (const name of ["acme/one", "acme/two"]) {
          releases.addRelease(name, {
            tag: "v2.0.0",
            createdAt: new Date(Date.now() + 60_000).toISOString(),
            assets: [{ name: "cli", content: `${name} v2` }],
            files: { ".delivery.yml": DECLARATION },
          });
        }
        await until(async () => (await historyOf(second.t)).length === 5);
        // A few more rounds with nothing new: both instances keep ticking and competing.
        const rounds = () => roundsIn(first.logs).length + roundsIn(second.logs).length;
        const sofar = rounds();
        await until(async () => rounds() >= sofar + 4, 10_000);
        await Promise.all(instances.map(({ scheduler }) => scheduler.stop()));

        const roundsA = roundsIn(first.logs);
        const roundsB = roundsIn(second.logs);
        expect(roundsA.filter((round) => roundsB.includes(round))).toEqual([]);
        expect(new Set([...roundsA, ...roundsB]).size).toBe(roundsA.length + roundsB.length);

        const history = await historyOf(first.t);
        const keys = history.map((record) => `${record.repository}@${record.tag}`);
        expect(keys).toHaveLength(5);
        expect(new Set(keys).size).toBe(5);
        const downloads = instances.reduce(
          (sum, { t }) =>
            sum + t.stub.state.requests.filter((r) => r.path.includes("/releases/assets/")).length,
          0,
        );
        expect(downloads).toBe(5);
      });
    },
  );
}
