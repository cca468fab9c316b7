import { describe, expect, it } from "vitest";
import { safeEqual } from "./secrets.js";

describe("safeEqual", () => {
  it("accepts equal secrets and refuses different ones, whatever their lengths", () => {
    expect(safeEqual("s3cret", "s3cret")).toBe(true);
    expect(safeEqual("s3cret", "s3cre")).toBe(false);
    expect(safeEqual("", "s3cret")).toBe(false);
  });
});
