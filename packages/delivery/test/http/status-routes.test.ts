import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HistoryRepository } from "../../src/releases/history-repository.js";
import { WatchedRepositoryStore } from "../../src/repositories/watched-repository-store.js";
import { RATE_LIMIT_CACHE_MS } from "../../src/status/status-service.js";
import { VERSION } from "../../src/version.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";

const DAY_MS = 24 * 60 * 60 * 1000;

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`GET /monitor/status (${dialect})`, () => {
    let t: TestApp;
    const asked: Date[] = [];
    let objectstoreUp = true;

    const status = async () => {
      const response = await t.app.inject({ method: "GET", url: "/monitor/status" });
      expect(response.statusCode).toBe(200);
      return response.json();
    };

    beforeAll(async () => {
      t = await createTestApp(dialect, {
        env: { SCHEDULER_INTERVAL_MINUTES: "7" },
        releases: {
          async countProcessedSince(since) {
            asked.push(since);
            return 3;
          },
        },
        objectstore: { isHealthy: async () => objectstoreUp },
      });
      const repos = new WatchedRepositoryStore(t.database.db);
      const now = t.clock.now().toISOString();
      await repos.add("acme", "one", now);
      await repos.add("acme", "two", now);
      const off = await repos.add("acme", "three", now);
      await repos.setActive(off.id, false);
      t.stub.state.rateLimit = { limit: 5000, remaining: 4100, used: 900, reset: 1_900_000_500 };
    });
    afterAll(() => t.close());

    it("reports every field", async () => {
      t.scheduler.setRunning(true);
      t.scheduler.setNextRoundAt(new Date("2026-01-15T12:07:00.000Z"));
      expect(await status()).toEqual({
        version: VERSION,
        repositories: { active: 2, total: 3 },
        releases_last_24h: 3,
        codehost_rate_limit: { limit: 5000, remaining: 4100, used: 900, reset: 1_900_000_500 },
        services: { mysql: true, database: dialect, objectstore: true },
        scheduler: {
          running: true,
          interval_minutes: 7,
          next_round_at: "2026-01-15T12:07:00.000Z",
        },
      });
      expect(asked.at(-1)?.getTime()).toBe(t.clock.now().getTime() - DAY_MS);
    });

    it("reports the scheduler stopped and the object store down", async () => {
      t.scheduler.setRunning(false);
      objectstoreUp = false;
      const body = await status();
      expect(body.scheduler).toEqual({ running: false, interval_minutes: 7, next_round_at: null });
      expect(body.services).toEqual({ mysql: true, database: dialect, objectstore: false });
      objectstoreUp = true;
    });

    it("asks the code host for its rate limit at most every 30 seconds", async () => {
      t.clock.advance(RATE_LIMIT_CACHE_MS + 1);
      const before = t.stub.requestsTo("/rate_limit").length;
      await status();
      await status();
      expect(t.stub.requestsTo("/rate_limit").length).toBe(before + 1);
      t.stub.state.rateLimit = { ...t.stub.state.rateLimit, remaining: 4000, used: 1000 };
      t.clock.advance(RATE_LIMIT_CACHE_MS + 1);
      expect((await status()).codehost_rate_limit.remaining).toBe(4000);
    });

    it("answers with null rate-limit fields while the code host fails", async () => {
      t.clock.advance(RATE_LIMIT_CACHE_MS + 1);
      t.stub.failNext(1, 502);
      expect((await status()).codehost_rate_limit).toEqual({
        limit: null,
        remaining: null,
        used: null,
        reset: null,
      });
    });
  });
}

describe("GET /monitor/status without an object store, with the database down", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp("sqlite");
  });
  afterAll(() => t.close());

  it("reports no object store as objectstore: false and the default interval", async () => {
    const body = (await t.app.inject({ method: "GET", url: "/monitor/status" })).json();
    expect(body.services).toEqual({ mysql: true, database: "sqlite", objectstore: false });
    expect(body.scheduler).toEqual({ running: false, interval_minutes: 10, next_round_at: null });
  });

  it("documents scheduler.next_round_at in the OpenAPI status schema", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
    const schema =
      doc.paths["/monitor/status"].get.responses["200"].content["application/json"].schema;
    expect(schema.properties.scheduler.properties.next_round_at).toEqual({
      type: "string",
      format: "date-time",
      nullable: true,
      description: "when this instance's next scheduler tick is due; null when not running",
    });
  });

  it("still answers when the database is down, with mysql: false", async () => {
    await t.database.close();
    const response = await t.app.inject({ method: "GET", url: "/monitor/status" });
    expect(response.statusCode).toBe(200);
    expect(response.json().services).toMatchObject({ mysql: false, database: "sqlite" });
  });
});

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(
    `releases_last_24h from the release history (${dialect})`,
    () => {
      let t: TestApp;
      beforeAll(async () => {
        t = await createTestApp(dialect);
      });
      afterAll(() => t.close());

      it("counts the releases processed (success or partial) in the last 24 hours, and drops them with their repository", async () => {
        const repos = new WatchedRepositoryStore(t.database.db);
        const history = new HistoryRepository(t.database.db);
        const repo = await repos.add("acme", "history", t.clock.now().toISOString());
        const now = t.clock.now().getTime();
        const record = async (
          tag: string,
          status: "success" | "partial" | "failed",
          hoursAgo: number,
        ) => {
          const claim = await history.claim(repo.id, tag, "manual", new Date(now), new Date(0));
          if (!claim.claimed) throw new Error(`could not claim ${tag}`);
          await history.complete(claim.id, claim.token, {
            name: tag,
            status,
            filesCount: 1,
            totalBytes: 10,
            errors: [],
            files: [],
            processedAt: new Date(now - hoursAgo * 3_600_000).toISOString(),
            durationMs: 1000,
          });
        };
        await record("v1.0.0", "success", 1);
        await record("v1.1.0", "partial", 23);
        await record("v1.2.0", "failed", 2);
        await record("v0.9.0", "success", 25);

        const status = async () =>
          (await t.app.inject({ method: "GET", url: "/monitor/status" })).json();
        expect((await status()).releases_last_24h).toBe(2);

        const deleted = await t.app.inject({
          method: "DELETE",
          url: `/monitor/repositories/${repo.id}`,
          headers: { "x-api-key": TEST_API_KEY },
        });
        expect(deleted.statusCode).toBe(200);
        expect((await status()).releases_last_24h).toBe(0);
        const left = await t.database.db
          .selectFrom("release_history")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("repository_id", "=", repo.id)
          .executeTakeFirstOrThrow();
        expect(Number(left.n)).toBe(0);
      });
    },
  );
}

describe("GET /monitor/status with a malformed rate-limit answer from the code host", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp("sqlite");
  });
  afterAll(() => t.close());

  const good = { limit: 5000, remaining: 4100, used: 900, reset: 1_900_000_500 };
  const both = (rate: unknown) => ({ resources: { core: rate }, rate });

  it.each([
    ["a missing remaining", both({ ...good, remaining: undefined }), { ...good, remaining: null }],
    [
      "a remaining given as text",
      both({ ...good, remaining: "4100" }),
      { ...good, remaining: null },
    ],
    ["a negative remaining", both({ ...good, remaining: -1 }), { ...good, remaining: null }],
    ["a fractional used", both({ ...good, used: 1.5 }), { ...good, used: null }],
    ["an out-of-range limit", both({ ...good, limit: 1e300 }), { ...good, limit: null }],
    ["a reset of null", both({ ...good, reset: null }), { ...good, reset: null }],
    ["a boolean reset", both({ ...good, reset: true }), { ...good, reset: null }],
    ["only the deprecated rate object", { rate: good }, good],
    ["a core that is not an object", both("plenty"), null],
    ["an empty object", {}, null],
    ["an array", [good], null],
    ["a body that is not JSON", "rate limit: plenty", null],
  ])("answers 200 with the unknown fields null for %s", async (_case, body, expected) => {
    t.clock.advance(RATE_LIMIT_CACHE_MS + 1);
    t.stub.state.rateLimitBody = body;
    const response = await t.app.inject({ method: "GET", url: "/monitor/status" });
    expect(response.statusCode).toBe(200);
    expect(response.json().codehost_rate_limit).toEqual(
      expected ?? { limit: null, remaining: null, used: null, reset: null },
    );
  });

  it("reports the code host's answer again once it is well-formed", async () => {
    t.clock.advance(RATE_LIMIT_CACHE_MS + 1);
    t.stub.state.rateLimitBody = both({ ...good, remaining: "many" });
    expect((await t.app.inject({ method: "GET", url: "/monitor/status" })).statusCode).toBe(200);
    t.stub.state.rateLimitBody = undefined;
    t.stub.state.rateLimit = good;
    t.clock.advance(RATE_LIMIT_CACHE_MS + 1);
    const response = await t.app.inject({ method: "GET", url: "/monitor/status" });
    expect(response.json().codehost_rate_limit).toEqual(good);
  });
});
