import { describe, expect, it } from "vitest";
import { retryWithDelays } from "./retry.js";
import { ManualClock } from "./test-kit/manual-clock.js";

/** Work failing `failures` times, then answering "done"; records when each attempt started. */
function flaky(clock: ManualClock, failures: number) {
  const startedAt: number[] = [];
  const work = async (attempt: number) => {
    startedAt.push(clock.now().getTime());
    if (attempt <= failures) throw new Error(`failure ${attempt}`);
    return "done";
  };
  return { work, startedAt };
}

describe("retrying with delays", () => {
  it("tries again after each delay until the work succeeds", async () => {
    const clock = new ManualClock(0);
    const { work, startedAt } = flaky(clock, 2);
    const retries: Array<[string, number, number]> = [];
    const result = retryWithDelays([1_000, 5_000], work, {
      clock,
      onRetry: (error, attempt, delay) => retries.push([(error as Error).message, attempt, delay]),
    });
    expect(await clock.settle(result)).toBe("done");
    expect(startedAt).toEqual([0, 1_000, 6_000]);
    expect(retries).toEqual([
      ["failure 1", 1, 1_000],
      ["failure 2", 2, 5_000],
    ]);
  });

  it("rejects with the last failure once the delays run out", async () => {
    const clock = new ManualClock(0);
    const { work, startedAt } = flaky(clock, 5);
    await expect(clock.settle(retryWithDelays([10], work, { clock }))).rejects.toThrow("failure 2");
    expect(startedAt).toHaveLength(2);
  });

  it("does not retry a failure shouldRetry refuses", async () => {
    const clock = new ManualClock(0);
    const { work, startedAt } = flaky(clock, 5);
    await expect(
      retryWithDelays([10, 10], work, { clock, shouldRetry: () => false }),
    ).rejects.toThrow("failure 1");
    expect(startedAt).toHaveLength(1);
  });

  it("stops waiting when the signal aborts, rejecting with its reason", async () => {
    const clock = new ManualClock(0);
    const { work, startedAt } = flaky(clock, 5);
    const controller = new AbortController();
    const result = retryWithDelays([60_000], work, { clock, signal: controller.signal });
    while (clock.pendingSleeps === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error("claim lost"));
    await expect(result).rejects.toThrow("claim lost");
    expect(startedAt).toHaveLength(1);
  });
});
