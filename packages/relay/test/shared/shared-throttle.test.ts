import { randomInt } from "node:crypto";
import { serviceAvailable } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createSharedDatabase,
  firstInstanceConfig,
  mariadbAvailable,
  type SharedInstance,
  startInstance,
  type TestSharedDatabase,
} from "./shared-relays.js";

// RELAY_REDIS=redis://…: the per-IP API throttle is counted in that Redis, so every instance
// counts in the same windows; when Redis does not answer each instance counts alone.
const REDIS = { name: "Redis", host: "127.0.0.1", port: 6379 };
const available = (await mariadbAvailable()) && (await serviceAvailable(REDIS));
const LIMIT = 4;

describe.skipIf(!available)("the API throttle of several instances", () => {
  let database: TestSharedDatabase;
  const instances: SharedInstance[] = [];

  beforeEach(async () => {
    database = await createSharedDatabase();
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.stop("SIGKILL")));
    await database.drop();
  });

  async function start(redis: string) {
    const env = { RELAY_REDIS: redis, RUST_LOG: "info" };
    const a = await startInstance("a", database.url, {
      env,
      config: (dir) => firstInstanceConfig(dir, { api_rate_per_min: LIMIT }),
    });
    instances.push(a);
    const b = await startInstance("b", database.url, { env });
    instances.push(b);
    return [a, b] as const;
  }

  // A client address of the test's own (X-Forwarded-For from loopback, a trusted proxy), so no
  // other run's counts in the same Redis meet this one's.
  const client = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(256)}`;
  const call = (on: SharedInstance) =>
    fetch(`${on.base}/domains`, { headers: { "x-forwarded-for": client } }).then((r) => r.status);

  it("counts every instance's requests in the shared Redis: the limit holds across them", async () => {
    const [a, b] = await start(`redis://${REDIS.host}:${REDIS.port}`);
    const statuses: number[] = [];
    for (let index = 0; index < LIMIT + 2; index++) statuses.push(await call(index % 2 ? b : a));
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it("falls back to counting per instance, with a warning, when Redis does not answer", async () => {
    const [a, b] = await start("redis://127.0.0.1:1");
    const statuses: number[] = [];
    for (let index = 0; index < LIMIT + 1; index++) statuses.push(await call(a));
    for (let index = 0; index < LIMIT + 1; index++) statuses.push(await call(b));
    expect(statuses).toEqual([200, 200, 200, 200, 429, 200, 200, 200, 200, 429]);
    expect(a.process.output()).toContain("Redis unreachable");
  });
});
