import { describe, expect, it } from "vitest";
import { randomHex128 } from "./random-hex.js";

describe("randomHex128", () => {
  it("gives 32 lower-case hexadecimal digits, a new value each time", () => {
    const values = Array.from({ length: 1000 }, randomHex128);
    for (const value of values) expect(value).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(values).size).toBe(values.length);
  });
});
