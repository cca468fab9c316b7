import { describe, expect, it } from "vitest";
import { bootStep, ConfigError } from "./config-error.js";

describe("a configuration error", () => {
  it("names the variable first", () => {
    const error = new ConfigError("PORT", "expected a whole number");
    expect(error.message).toBe("PORT: expected a whole number");
    expect(error.where).toBe("PORT");
    expect(error.name).toBe("ConfigError");
  });

  it("names the file, then the field", () => {
    const error = new ConfigError("relay.json", "must be at least 1", "tick_interval_secs");
    expect(error.message).toBe('relay.json: field "tick_interval_secs": must be at least 1');
    expect(error.field).toBe("tick_interval_secs");
  });
});

describe("a boot step", () => {
  it("passes its result through", async () => {
    expect(await bootStep({ where: "RELAY_DB" }, "cannot open", () => 42)).toBe(42);
  });

  it("turns a failure into a configuration error naming the culprit, the problem and the cause", async () => {
    const failing = bootStep({ where: "relay.json", field: "listen" }, "cannot listen", () =>
      Promise.reject(new Error("EADDRINUSE")),
    );
    await expect(failing).rejects.toThrow(ConfigError);
    await expect(failing).rejects.toThrow('relay.json: field "listen": cannot listen (EADDRINUSE)');
  });

  it("lets a configuration error through unchanged", async () => {
    const original = new ConfigError("PORT", "expected a whole number");
    await expect(
      bootStep({ where: "DATABASE_URL" }, "cannot open", () => {
        throw original;
      }),
    ).rejects.toBe(original);
  });
});
