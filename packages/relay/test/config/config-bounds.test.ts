import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "@rd/common";
import { makeTempDir } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";
import { loadConfigFile, validateConfigFile } from "../../src/config/config-loader.js";
import { parseEnv } from "../../src/config/env.js";
import { MAX_QUEUE_ATTEMPTS, MAX_SYNC_ATTEMPTS, RANGES } from "../../src/config/schema.js";

type Field = keyof typeof RANGES;

/** Where each bounded setting sits in the file: a file holding `value` there, and its path. */
const PLACES: Record<Field, Array<(value: unknown) => [object, string]>> = {
  smtp_timeout_secs: [(v) => [{ smtp_timeout_secs: v }, "smtp_timeout_secs"]],
  retention_days: [(v) => [{ retention_days: v }, "retention_days"]],
  sync_retry_delays_secs: [(v) => [{ sync_retry_delays_secs: [0, v] }, "sync_retry_delays_secs.1"]],
  queue_backoff_secs: [(v) => [{ queue_backoff_secs: [v] }, "queue_backoff_secs.0"]],
  tick_interval_secs: [(v) => [{ tick_interval_secs: v }, "tick_interval_secs"]],
  send_delay_secs: [(v) => [{ send_delay_secs: v }, "send_delay_secs"]],
  api_rate_per_min: [(v) => [{ api_rate_per_min: v }, "api_rate_per_min"]],
  per_hour: [
    (v) => [
      { default_domain_limits: { per_hour: v, per_day: 1 } },
      "default_domain_limits.per_hour",
    ],
    (v) => [domainWithLimits({ per_hour: v, per_day: 1 }), "domains.a.test.limits.per_hour"],
  ],
  per_day: [
    (v) => [
      { default_domain_limits: { per_hour: 1, per_day: v } },
      "default_domain_limits.per_day",
    ],
    (v) => [domainWithLimits({ per_hour: 1, per_day: v }), "domains.a.test.limits.per_day"],
  ],
};

function domainWithLimits(limits: object) {
  return { domains: { "a.test": { selector: "s", key_path: "/k.pem", limits } } };
}

const WHOLE_NUMBERS: readonly Field[] = ["api_rate_per_min", "per_hour", "per_day"];

const cases = Object.entries(PLACES).flatMap(([field, places]) =>
  places.map((place) => ({ field: field as Field, place })),
);

function refusal(file: object): ConfigError {
  try {
    validateConfigFile(file, "relay.json");
  } catch (error) {
    return error as ConfigError;
  }
  return expect.fail(`accepted ${JSON.stringify(file)}`);
}

describe("bounds of the numeric settings in the configuration file", () => {
  it.each(cases)("$field: accepts its minimum and its maximum", ({ field, place }) => {
    for (const value of [RANGES[field].min, RANGES[field].max]) {
      const [file] = place(value);
      expect(validateConfigFile(file, "relay.json")).toEqual(file);
    }
  });

  it.each(cases)(
    "$field: refuses values beyond its range, naming the field",
    ({ field, place }) => {
      const { min, max } = RANGES[field];
      for (const value of [min - 1, max + 1, max * 1000, 1e308, -1e308]) {
        const [file, path] = place(value);
        const error = refusal(file);
        expect(error).toBeInstanceOf(ConfigError);
        expect(error.message).toContain(`field "${path}"`);
      }
    },
  );

  it.each(cases)("$field: refuses what is not a number", ({ place }) => {
    for (const value of ["5", true, null, [], {}]) {
      const [file, path] = place(value);
      expect(refusal(file).message).toContain(`field "${path}"`);
    }
  });

  it.each(cases.filter(({ field }) => WHOLE_NUMBERS.includes(field)))(
    "$field: refuses fractions",
    ({ place }) => {
      for (const value of [1e-6, 0.5, 1.5, 99.99]) {
        const [file, path] = place(value);
        expect(refusal(file).message).toContain(`field "${path}"`);
      }
    },
  );

  it.each(cases.filter(({ field }) => !WHOLE_NUMBERS.includes(field)))(
    "$field: takes fractions (decisions: every *_secs field)",
    ({ place }) => {
      const [file] = place(0.5);
      expect(validateConfigFile(file, "relay.json")).toEqual(file);
    },
  );

  it("limits the synchronous schedule and the queue backoff to the attempts they can describe", () => {
    const sync = { sync_retry_delays_secs: Array(MAX_SYNC_ATTEMPTS).fill(1) };
    const queue = { queue_backoff_secs: Array(MAX_QUEUE_ATTEMPTS).fill(1) };
    expect(validateConfigFile(sync, "relay.json")).toEqual(sync);
    expect(validateConfigFile(queue, "relay.json")).toEqual(queue);
    const longSync = { sync_retry_delays_secs: Array(MAX_SYNC_ATTEMPTS + 1).fill(1) };
    const longQueue = { queue_backoff_secs: Array(MAX_QUEUE_ATTEMPTS + 1).fill(1) };
    expect(refusal(longSync).message).toContain('field "sync_retry_delays_secs"');
    expect(refusal(longQueue).message).toContain('field "queue_backoff_secs"');
  });

  it("every duration stays below Node's timer limit, so no timer can fire at once", () => {
    const timerLimitSecs = (2 ** 31 - 1) / 1000;
    for (const field of [
      "smtp_timeout_secs",
      "sync_retry_delays_secs",
      "tick_interval_secs",
      "send_delay_secs",
    ] as const) {
      expect(RANGES[field].max).toBeLessThan(timerLimitSecs);
    }
  });

  it("stops the boot with a message naming the file and the field", async () => {
    const dir = await makeTempDir("relay-bounds-");
    try {
      const configPath = join(dir.path, "relay.json");
      await writeFile(configPath, JSON.stringify({ send_delay_secs: 3_000_000 }));
      const error = await loadConfigFile(parseEnv({ RELAY_CONFIG: configPath })).then(
        () => expect.fail("the configuration was accepted"),
        (failure: unknown) => failure as ConfigError,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain(configPath);
      expect(error.message).toContain('field "send_delay_secs"');
      expect(error.message).toContain(String(RANGES.send_delay_secs.max));
    } finally {
      await dir.remove();
    }
  });
});
