import { describe, expect, it } from "vitest";
import { systemClock } from "./clock.js";

describe("the system clock", () => {
  it("reads the current time", () => {
    const before = Date.now();
    const now = systemClock.now().getTime();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it("sleeps at least the time asked", async () => {
    const start = performance.now();
    await systemClock.sleep(20);
    expect(performance.now() - start).toBeGreaterThanOrEqual(19);
  });

  it("rejects a sleep with the signal's reason when it aborts", async () => {
    const controller = new AbortController();
    const reason = new Error("stopped");
    const sleeping = systemClock.sleep(60_000, controller.signal);
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
  });

  it("rejects at once when the signal has already aborted", async () => {
    const reason = new Error("already stopped");
    await expect(systemClock.sleep(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
