import { setTimeout as sleep } from "node:timers/promises";
import { type Clock, systemClock } from "@rd/common";
import { ManualClock } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";
import { createSendGate } from "./send-gate.js";

/** A manual clock whose sleeps pass at once, moving it; the waits are recorded. */
class InstantClock extends ManualClock {
  readonly sleeps: number[] = [];
  override async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.advance(ms);
  }
}
const fakeTimer = () => new InstantClock(1_000_000);

/** An attempt that records its start time and whether another attempt ran at the same time. */
function tracker(timer: Clock) {
  const starts: number[] = [];
  let running = 0;
  let maxRunning = 0;
  const attempt = async (workMs: number) => {
    starts.push(timer.now().getTime());
    running += 1;
    maxRunning = Math.max(maxRunning, running);
    await sleep(workMs);
    running -= 1;
  };
  return { starts, attempt, maxRunning: () => maxRunning };
}

describe("send gate", () => {
  it("runs one attempt at a time, starts at least the delay apart, in arrival order", async () => {
    const timer = fakeTimer();
    const gate = createSendGate(() => 3, timer);
    const { starts, attempt, maxRunning } = tracker(timer);
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((n) => gate.run(() => attempt(5).then(() => order.push(n)))));
    expect(order).toEqual([1, 2, 3]);
    expect(maxRunning()).toBe(1);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(3000);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(3000);
  });

  it("does not wait when the previous attempt started longer ago than the delay", async () => {
    const timer = fakeTimer();
    const gate = createSendGate(() => 1, timer);
    await gate.run(async () => undefined);
    await timer.sleep(5000);
    timer.sleeps.length = 0;
    await gate.run(async () => undefined);
    expect(timer.sleeps).toEqual([]);
  });

  it("keeps the gate going after a failed attempt", async () => {
    const gate = createSendGate(() => 1, fakeTimer());
    await expect(gate.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(gate.run(async () => "next")).resolves.toBe("next");
  });

  it("runs attempts in parallel when the delay is 0", async () => {
    const timer = fakeTimer();
    const gate = createSendGate(() => 0, timer);
    const { attempt, maxRunning } = tracker(timer);
    await Promise.all([1, 2, 3].map(() => gate.run(() => attempt(20))));
    expect(maxRunning()).toBe(3);
    expect(timer.sleeps).toEqual([]);
  });

  it("reads the delay at each attempt, so a changed setting applies to the next one", async () => {
    const timer = fakeTimer();
    let delay = 2;
    const gate = createSendGate(() => delay, timer);
    await gate.run(async () => undefined);
    delay = 5;
    await gate.run(async () => undefined);
    expect(timer.sleeps).toEqual([5000]);
  });

  it("once closed, starts no attempt, and its wait for the next turn ends at once", async () => {
    const closing = new AbortController();
    const clock = new ManualClock();
    const gate = createSendGate(() => 3600, clock, closing.signal);
    const started: number[] = [];
    await gate.run(async () => void started.push(1));
    const held = gate.run(async () => void started.push(2));
    await sleep(20);
    expect(clock.pendingSleeps).toBe(1);

    closing.abort();
    // The hour's wait is over (on the system clock its timer would keep the process alive),
    // and the attempt never starts.
    expect(clock.pendingSleeps).toBe(0);
    const late = gate.run(async () => void started.push(3));
    const unsettled = Symbol("unsettled");
    const settled = (promise: Promise<unknown>) =>
      Promise.race([promise, sleep(50).then(() => unsettled)]);
    expect(await settled(held)).toBe(unsettled);
    expect(await settled(late)).toBe(unsettled);
    expect(started).toEqual([1]);
  });

  it("once closed, starts no attempt when the delay is 0 either", async () => {
    const closing = new AbortController();
    const gate = createSendGate(() => 0, systemClock, closing.signal);
    closing.abort();
    let started = false;
    const late = gate.run(async () => {
      started = true;
    });
    const result = await Promise.race([late.then(() => "settled"), sleep(50).then(() => "held")]);
    expect(result).toBe("held");
    expect(started).toBe(false);
  });

  it("spaces attempts in real time with a short delay", async () => {
    const gate = createSendGate(() => 0.2);
    const starts: number[] = [];
    await Promise.all([1, 2, 3].map(() => gate.run(async () => void starts.push(Date.now()))));
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(195);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(195);
  });
});
