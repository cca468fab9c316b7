import { describe, expect, it } from "vitest";
import { retryDelayMs } from "./webhook-retry.js";

describe("webhook retry delays", () => {
  it.each([
    [1, 5_000],
    [2, 30_000],
    [3, 120_000],
    [4, 600_000],
    [5, 1_800_000],
    [6, 3_600_000],
    [7, 7_200_000],
    [30, 7_200_000],
  ])("after %i failed attempts the next waits %i ms", (attempts, delay) => {
    expect(retryDelayMs(attempts)).toBe(delay);
  });

  it("reaches 24 hours after a bounded number of attempts", () => {
    let elapsed = 0;
    let attempts = 0;
    while (elapsed < 24 * 3600 * 1000) elapsed += retryDelayMs(++attempts);
    expect(attempts).toBeLessThan(20);
  });
});
