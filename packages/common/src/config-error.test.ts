import { describe, expect, it } from "vitest";
import { ConfigError } from "./config-error.js";

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
