import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RANGES } from "../../src/config/schema.js";
import { ADMIN_TOKEN, TestRelay } from "../helpers/relay-harness.js";

/** Every number `PUT /ratelimit` takes: a body holding `value` there, and the setting's range. */
const SETTINGS = [
  ["api_rate_per_min", (v: unknown) => ({ api_rate_per_min: v }), RANGES.api_rate_per_min, true],
  ["send_delay_secs", (v: unknown) => ({ send_delay_secs: v }), RANGES.send_delay_secs, false],
  [
    "default_domain_limits.per_hour",
    (v: unknown) => ({ default_domain_limits: { per_hour: v, per_day: 0 } }),
    RANGES.per_hour,
    true,
  ],
  [
    "default_domain_limits.per_day",
    (v: unknown) => ({ default_domain_limits: { per_hour: 0, per_day: v } }),
    RANGES.per_day,
    true,
  ],
  [
    "domains.*.per_hour",
    (v: unknown) => ({ domains: { "a.test": { per_hour: v, per_day: 0 } } }),
    RANGES.per_hour,
    true,
  ],
  [
    "domains.*.per_day",
    (v: unknown) => ({ domains: { "a.test": { per_hour: 0, per_day: v } } }),
    RANGES.per_day,
    true,
  ],
] as const;

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

  it.each(SETTINGS)("%s: takes its minimum and its maximum", async (_field, body, range) => {
    for (const value of [range.min, range.max]) {
      const response = await relay.admin("PUT", "/ratelimit", body(value));
      expect(response.statusCode).toBe(200);
      expect(await relay.configFile()).toMatchObject(configFragment(body(value)));
    }
  });

  it.each(SETTINGS)(
    "%s: refuses values beyond its range, fractions where whole, and non-numbers",
    async (_field, body, range, whole) => {
      const before = await relay.configFile();
      const refused: unknown[] = [range.min - 1, range.max + 1, 3_000_000_000, 1e308, -1e-6];
      refused.push("5", true, null, [], {});
      if (whole) refused.push(1e-6, 0.5, 1.5, range.max - 0.5);
      for (const value of refused) {
        const response = await relay.admin("PUT", "/ratelimit", body(value));
        expect(response.statusCode, JSON.stringify(value)).toBe(400);
        expect(response.json().error).toBe("bad_request");
      }
      // JSON.parse turns an out-of-range literal into Infinity.
      const infinite = await relay.app.inject({
        method: "PUT",
        url: "/ratelimit",
        headers: { "x-auth-token": ADMIN_TOKEN, "content-type": "application/json" },
        payload: JSON.stringify(body(0)).replace(/\b0\b/, "1e999"),
      });
      expect(infinite.statusCode).toBe(400);
      expect(await relay.configFile()).toEqual(before);
      expect((await relay.admin("GET", "/ratelimit")).json()).toEqual({
        api_rate_per_min: 50,
        send_delay_secs: 3,
        default_domain_limits: { per_hour: 20, per_day: 100 },
      });
    },
  );

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

/** Where a `PUT /ratelimit` body's fields land in the configuration file. */
function configFragment(body: Record<string, unknown>): Record<string, unknown> {
  const { domains, ...rest } = body;
  if (!domains) return rest;
  const entries = Object.entries(domains as Record<string, unknown>);
  return {
    ...rest,
    domains: Object.fromEntries(entries.map(([name, limits]) => [name, { limits }])),
  };
}
