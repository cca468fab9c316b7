import { describe, expect, it, vi } from "vitest";
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

  it("sleeps again when its timer wakes before now() has moved by the time asked", async () => {
    // The clock reads 30 ms ahead as the sleep starts: its 20 ms timer wakes 30 ms too early.
    const start = Date.now();
    const ahead = vi.spyOn(Date, "now").mockReturnValueOnce(start + 30);
    await systemClock.sleep(20);
    ahead.mockRestore();
    expect(Date.now()).toBeGreaterThanOrEqual(start + 50);
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
