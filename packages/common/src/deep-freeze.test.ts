import { describe, expect, it } from "vitest";
import { deepFreeze } from "./deep-freeze.js";

describe("deep freezing", () => {
  it("freezes nested objects and arrays and returns the same value", () => {
    const config = {
      listen: "0.0.0.0:80",
      domains: [{ name: "example.com" }],
      limits: { rate: 1 },
    };
    expect(deepFreeze(config)).toBe(config);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.domains)).toBe(true);
    expect(Object.isFrozen(config.domains[0])).toBe(true);
    expect(Object.isFrozen(config.limits)).toBe(true);
  });

  it("leaves primitives and null as they are", () => {
    expect(deepFreeze(3)).toBe(3);
    expect(deepFreeze(null)).toBe(null);
    expect(deepFreeze({ missing: undefined })).toEqual({ missing: undefined });
  });
});
