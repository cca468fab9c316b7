import { describe, expect, it } from "vitest";
import { ManualClock } from "./manual-clock.js";

describe("the manual clock", () => {
  it("starts where it is told and moves only when advanced", () => {
    const clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
    expect(clock.now().toISOString()).toBe("2026-03-01T00:00:00.000Z");
    clock.advance(1_500);
    expect(clock.now().toISOString()).toBe("2026-03-01T00:00:01.500Z");
  });

  it("hands out copies, so a caller cannot move it", () => {
    const clock = new ManualClock(0);
    clock.now().setTime(99);
    expect(clock.now().getTime()).toBe(0);
  });

  it("wakes the sleeps that are due, in the order they fall due", async () => {
    const clock = new ManualClock(0);
    const woken: string[] = [];
    const later = clock.sleep(300).then(() => woken.push("300"));
    const sooner = clock.sleep(100).then(() => woken.push("100"));
    void clock.sleep(1_000).then(() => woken.push("1000"));
    clock.advance(299);
    await sooner;
    expect(woken).toEqual(["100"]);
    clock.advance(1);
    await later;
    expect(woken).toEqual(["100", "300"]);
    expect(clock.pendingSleeps).toBe(1);
  });

  it("settles work that sleeps, moving the time to each sleep as it comes", async () => {
    const clock = new ManualClock(0);
    const wokenAt: number[] = [];
    const work = async () => {
      for (const ms of [500, 2_000]) {
        await clock.sleep(ms);
        wokenAt.push(clock.now().getTime());
      }
      return "done";
    };
    expect(await clock.settle(work())).toBe("done");
    expect(wokenAt).toEqual([500, 2_500]);
  });

  it("does not wait on a sleep of no time", async () => {
    await new ManualClock(0).sleep(0);
  });

  it("rejects a sleep with the signal's reason when it aborts, and forgets it", async () => {
    const clock = new ManualClock(0);
    const controller = new AbortController();
    const sleeping = clock.sleep(100, controller.signal);
    controller.abort(new Error("stopped"));
    await expect(sleeping).rejects.toThrow("stopped");
    expect(clock.pendingSleeps).toBe(0);
  });
});
