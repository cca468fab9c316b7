import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, TestRelay } from "../helpers/relay-harness.js";

describe("rate-limit settings", () => {
  let relay: TestRelay;
  beforeEach(async () => {
    relay = await TestRelay.start({ config: { api_rate_per_min: 50 } });
    await relay.admin("POST", "/domains", { domain: "a.test" });
    await relay.admin("POST", "/domains", { domain: "b.test" });
  });
  afterEach(() => relay.close());

  it("reads the defaults, without per_domain when there are no overrides", async () => {
    const response = await relay.admin("GET", "/ratelimit");
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      api_rate_per_min: 50,
      send_delay_secs: 3,
      default_domain_limits: { per_hour: 20, per_day: 100 },
    });
  });

  it("changes only the fields given and writes them to the configuration file", async () => {
    const response = await relay.admin("PUT", "/ratelimit", { send_delay_secs: 0.5 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true });
    expect((await relay.admin("GET", "/ratelimit")).json()).toMatchObject({
      api_rate_per_min: 50,
      send_delay_secs: 0.5,
    });

    await relay.admin("PUT", "/ratelimit", {
      api_rate_per_min: 40,
      default_domain_limits: { per_hour: 7, per_day: 70 },
    });
    const file = await relay.configFile();
    expect(file).toMatchObject({
      api_rate_per_min: 40,
      send_delay_secs: 0.5,
      default_domain_limits: { per_hour: 7, per_day: 70 },
    });
  });

  it("replaces the listed domains' overrides and keeps the others", async () => {
    await relay.admin("PUT", "/ratelimit", {
      domains: { "a.test": { per_hour: 1, per_day: 2 }, "b.test": { per_hour: 3, per_day: 4 } },
    });
    await relay.admin("PUT", "/ratelimit", {
      domains: { "a.test": { per_hour: 10, per_day: 20 } },
    });
    expect((await relay.admin("GET", "/ratelimit")).json().per_domain).toEqual({
      "a.test": { per_hour: 10, per_day: 20 },
      "b.test": { per_hour: 3, per_day: 4 },
    });
    expect((await relay.configFile()).domains?.["a.test"]?.limits).toEqual({
      per_hour: 10,
      per_day: 20,
    });
  });

  it.each([
    ["a wrong type", { api_rate_per_min: "fast" }],
    ["a negative number", { send_delay_secs: -1 }],
    ["a fractional per_hour", { default_domain_limits: { per_hour: 1.5, per_day: 2 } }],
    ["a partial limits object", { default_domain_limits: { per_hour: 1 } }],
    ["an unknown field", { burst: 3 }],
    [
      "an unknown field inside limits",
      { domains: { "a.test": { per_hour: 1, per_day: 1, x: 1 } } },
    ],
    ["a body that is not an object", [1, 2]],
  ])("refuses %s with 400 and changes nothing", async (_case, body) => {
    const before = await relay.configFile();
    const response = await relay.admin("PUT", "/ratelimit", body);
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("bad_request");
    expect(await relay.configFile()).toEqual(before);
  });

  it("refuses invalid JSON with 400 bad_request", async () => {
    const response = await relay.app.inject({
      method: "PUT",
      url: "/ratelimit",
      headers: { "x-auth-token": ADMIN_TOKEN, "content-type": "application/json" },
      payload: '{"api_rate_per_min": 5',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("bad_request");
  });

  it("refuses an override for an unconfigured domain with 400 and changes nothing", async () => {
    const response = await relay.admin("PUT", "/ratelimit", {
      api_rate_per_min: 1,
      domains: { "nowhere.test": { per_hour: 1, per_day: 1 } },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("unknown_domain");
    expect((await relay.admin("GET", "/ratelimit")).json().api_rate_per_min).toBe(50);
  });

  it("requires the admin token", async () => {
    for (const method of ["GET", "PUT"] as const) {
      const response = await relay.app.inject({ method, url: "/ratelimit", payload: {} });
      expect(response.statusCode).toBe(401);
    }
  });
});
