import { randomInt } from "node:crypto";
import { serviceAvailable } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RawSmtp } from "../smtp/smtp-harness.js";
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
const REDIS_URL = `redis://${REDIS.host}:${REDIS.port}`;

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

  /** Instances a and b on one Redis, each with an SMTP submission port (`smtp` of each). */
  async function start(redis: string) {
    const env = { RELAY_REDIS: redis, RUST_LOG: "info" };
    const a = await startInstance("a", database.url, {
      env,
      config: (dir) =>
        firstInstanceConfig(dir, { api_rate_per_min: LIMIT, smtp_listen: "127.0.0.1:0" }),
    });
    instances.push(a);
    const b = await startInstance("b", database.url, {
      env,
      config: () => ({ smtp_listen: "127.0.0.1:0" }),
    });
    instances.push(b);
    return [a, b, [a.smtpPort as number, b.smtpPort as number]] as const;
  }

  // A client address of each test's own: HTTP requests carry it in X-Forwarded-For (from
  // loopback, a trusted proxy), SMTP connections are made from it (any 127.0.0.0/8 address is
  // this machine's), so no other test's counts in the same Redis meet this one's.
  let client = "";
  beforeEach(() => {
    client = `127.${1 + randomInt(255)}.${randomInt(256)}.${1 + randomInt(254)}`;
  });
  const call = (on: SharedInstance) =>
    fetch(`${on.base}/domains`, { headers: { "x-forwarded-for": client } }).then((r) => r.status);
  /** The greeting of a connection from `client` to the SMTP port `port` (closed after). */
  const connect = async (port: number) => {
    const raw = await RawSmtp.connect(port, "127.0.0.1", client);
    const reply = await raw.reply();
    raw.close();
    return reply.slice(0, 3);
  };

  it("counts every instance's requests in the shared Redis: the limit holds across them", async () => {
    const [a, b] = await start(REDIS_URL);
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

  it("counts SMTP connections and AUTH attempts split across the instances in the same window", async () => {
    const [, , smtp] = await start(REDIS_URL);
    const replies: string[] = [];
    for (let index = 0; index < LIMIT - 1; index++)
      replies.push(await connect(index % 2 ? smtp[1] : smtp[0]));
    // The last call of the allowance is an AUTH on b (its connection counted on a's window).
    const raw = await RawSmtp.connect(smtp[1], "127.0.0.1", client);
    await raw.reply();
    expect(await raw.command("EHLO client.test")).toMatch(/^250/);
    expect(await raw.command(`AUTH PLAIN ${Buffer.from("\0cli_0\0x").toString("base64")}`)).toMatch(
      /^421 4\.7\.0 /,
    );
    raw.close();
    replies.push(await connect(smtp[0]), await connect(smtp[1]));
    expect(replies).toEqual(["220", "220", "220", "421", "421"]);
  });

  it("counts HTTP requests and SMTP connections of every instance in one window", async () => {
    const [a, b, smtp] = await start(REDIS_URL);
    const calls = [
      await call(a),
      await connect(smtp[1]),
      await call(b),
      await connect(smtp[0]),
      await call(a),
      await connect(smtp[1]),
    ];
    expect(calls.map(String)).toEqual(["200", "220", "200", "220", "429", "421"]);
  });

  it("counts SMTP connections per instance, with a warning, when Redis does not answer", async () => {
    const [a, b, smtp] = await start("redis://127.0.0.1:1");
    const replies: string[] = [];
    for (let index = 0; index < LIMIT + 1; index++) replies.push(await connect(smtp[0]));
    for (let index = 0; index < LIMIT + 1; index++) replies.push(await connect(smtp[1]));
    expect(replies).toEqual(["220", "220", "220", "220", "421", "220", "220", "220", "220", "421"]);
    expect(a.process.output()).toContain("Redis unreachable");
    expect(b.process.output()).toContain("Redis unreachable");
  });
});
