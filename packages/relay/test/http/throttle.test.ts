import { ManualClock } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, TestRelay } from "../helpers/relay-harness.js";

describe("per-IP API throttle", () => {
  let relay: TestRelay;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = new ManualClock();
    relay = await TestRelay.start({ config: { api_rate_per_min: 3 }, clock });
  });
  afterEach(() => relay.close());

  /** A request without credentials that the throttle counts (probes and /docs are not counted). */
  const COUNTED = "/openapi.json";
  const get = (url: string, peer = "192.0.2.10", headers: Record<string, string> = {}) =>
    relay.app.inject({ method: "GET", url, remoteAddress: peer, headers });

  it("answers 429 rate_limited with Retry-After once the minute's allowance is used", async () => {
    for (let i = 0; i < 3; i++) expect((await get(COUNTED)).statusCode).toBe(200);
    clock.advance(15_000);
    const refused = await get(COUNTED);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      error: "rate_limited",
      message: "too many requests; retry later",
    });
    expect(refused.headers["retry-after"]).toBe("45");
  });

  it("adds no rate-limit headers of its own, to admitted or refused requests", async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await get(COUNTED));
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 429]);
    for (const answer of answers) {
      expect(Object.keys(answer.headers).filter((name) => name.includes("ratelimit"))).toEqual([]);
    }
  });

  it("refuses an address off the allowlist with 403 before counting it", async () => {
    await relay.relay.config.update((file) => {
      file.allowlist = ["192.0.2.99"];
    });
    for (let i = 0; i < 5; i++) expect((await get(COUNTED)).statusCode).toBe(403);
    await relay.relay.config.update((file) => {
      file.allowlist = [];
    });
    // The refused requests counted for nothing: the whole allowance is still there.
    for (let i = 0; i < 3; i++) expect((await get(COUNTED)).statusCode).toBe(200);
    expect((await get(COUNTED)).statusCode).toBe(429);
  });

  it("admits at once when the limit is raised in a window whose allowance was used", async () => {
    for (let i = 0; i < 3; i++) await get(COUNTED);
    for (let i = 0; i < 3; i++) expect((await get(COUNTED)).statusCode).toBe(429);
    await relay.relay.config.update((file) => {
      file.api_rate_per_min = 4;
    });
    // Refused requests are not counted: one more is allowed in the same window.
    expect((await get(COUNTED)).statusCode).toBe(200);
    expect((await get(COUNTED)).statusCode).toBe(429);
  });

  it("counts every endpoint, admin ones and unknown paths included, before credentials", async () => {
    expect((await get(COUNTED)).statusCode).toBe(200);
    expect((await get("/clients", "192.0.2.10", { "x-auth-token": ADMIN_TOKEN })).statusCode).toBe(
      200,
    );
    expect((await get("/no-such-path")).statusCode).toBe(404);
    // A wrong token is still throttled first.
    const response = await get("/clients", "192.0.2.10", { "x-auth-token": "wrong" });
    expect(response.statusCode).toBe(429);
    expect(Number(response.headers["retry-after"])).toBeGreaterThan(0);
  });

  it("counts each client address separately, and IPv6 per /64", async () => {
    for (let i = 0; i < 3; i++) await get(COUNTED, "192.0.2.10");
    expect((await get(COUNTED, "192.0.2.10")).statusCode).toBe(429);
    expect((await get(COUNTED, "192.0.2.11")).statusCode).toBe(200);

    for (let i = 0; i < 3; i++) await get(COUNTED, `2001:db8:0:1::${i + 1}`);
    expect((await get(COUNTED, "2001:db8:0:1::99")).statusCode).toBe(429);
    expect((await get(COUNTED, "2001:db8:0:2::1")).statusCode).toBe(200);
  });

  it("throttles the forwarded client, not the trusted proxy", async () => {
    for (let i = 0; i < 3; i++) {
      await get(COUNTED, "127.0.0.1", { "x-forwarded-for": "198.51.100.1" });
    }
    expect(
      (await get(COUNTED, "127.0.0.1", { "x-forwarded-for": "198.51.100.1" })).statusCode,
    ).toBe(429);
    expect(
      (await get(COUNTED, "127.0.0.1", { "x-forwarded-for": "198.51.100.2" })).statusCode,
    ).toBe(200);
  });

  it("opens a new allowance when the minute is over", async () => {
    for (let i = 0; i < 3; i++) await get(COUNTED);
    expect((await get(COUNTED)).statusCode).toBe(429);
    clock.advance(60_000);
    expect((await get(COUNTED)).statusCode).toBe(200);
  });

  it("applies a new api_rate_per_min from PUT /ratelimit at once", async () => {
    const admin = "192.0.2.99";
    const put = await relay.app.inject({
      method: "PUT",
      url: "/ratelimit",
      remoteAddress: admin,
      headers: { "x-auth-token": ADMIN_TOKEN },
      payload: { api_rate_per_min: 5 },
    });
    expect(put.statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await get(COUNTED)).statusCode).toBe(200);
    expect((await get(COUNTED)).statusCode).toBe(429);
  });

  it("does not count the probes and the docs page, which stay behind the allowlist", async () => {
    for (let i = 0; i < 3; i++) await get(COUNTED);
    expect((await get(COUNTED)).statusCode).toBe(429);
    // A healthy relay answers its probes (and `relay healthcheck`) however often it is asked.
    for (let i = 0; i < 10; i++) {
      expect((await get("/health")).statusCode).toBe(200);
      expect((await get("/ready")).statusCode).toBe(200);
    }
    expect((await get("/docs")).statusCode).toBe(200);
    expect((await get("/docs/static/swagger-ui-bundle.js")).statusCode).toBe(200);
    await relay.relay.config.update((file) => {
      file.allowlist = ["192.0.2.99"];
    });
    expect((await get("/health")).statusCode).toBe(403);
    expect((await get("/docs")).statusCode).toBe(403);
  });

  it("does not count a /metrics scrape with the token, but counts one without it", async () => {
    const scrape = (headers: Record<string, string>) => get("/metrics", "192.0.2.10", headers);
    for (let i = 0; i < 6; i++) {
      expect((await scrape({ authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
      expect((await scrape({ "x-auth-token": ADMIN_TOKEN })).statusCode).toBe(200);
    }
    // The allowance is whole: three counted calls, then 429.
    expect((await scrape({ authorization: "Bearer guess-1" })).statusCode).toBe(401);
    expect((await scrape({ "x-auth-token": "guess-2" })).statusCode).toBe(401);
    expect((await get(COUNTED)).statusCode).toBe(200);
    expect((await scrape({ authorization: "Bearer guess-3" })).statusCode).toBe(429);
    // The right token still passes while the address is throttled.
    expect((await scrape({ authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
  });
});
