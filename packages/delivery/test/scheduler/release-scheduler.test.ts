import { createLogging, systemClock } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";
import { ReleaseScheduler, type RoundLease } from "../../src/scheduler/release-scheduler.js";
import { createSchedulerState } from "../../src/scheduler/scheduler-state.js";

/** A lease kept in memory, shared by the schedulers given it: one claim per round slot. */
function memoryLease() {
  const claimed = new Set<number>();
  const events: string[] = [];
  let held = false;
  const lease: RoundLease = {
    async acquire(roundAt) {
      if (held || claimed.has(roundAt.getTime())) return false;
      claimed.add(roundAt.getTime());
      held = true;
      events.push("acquire");
      return true;
    },
    async renew() {
      events.push("renew");
    },
    async release() {
      held = false;
      events.push("release");
    },
  };
  return { lease, events, claimed };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function scheduler(options: {
  intervalMs: number;
  round: (signal: AbortSignal) => Promise<void>;
  lease?: RoundLease;
  renewEveryMs?: number;
}) {
  const state = createSchedulerState();
  const logs = new LogCapture();
  const instance = new ReleaseScheduler({
    intervalMs: options.intervalMs,
    round: options.round,
    lease: options.lease ?? memoryLease().lease,
    state,
    clock: systemClock,
    logger: createLogging({ destination: logs, filter: "debug" }).forTarget("delivery::scheduler"),
    renewEveryMs: options.renewEveryMs ?? 60_000,
  });
  return { instance, state, logs };
}

describe("release scheduler", () => {
  it("runs a round at start and then on every interval, and reports itself running", async () => {
    let rounds = 0;
    const { instance, state } = scheduler({ intervalMs: 50, round: async () => void rounds++ });
    const before = Date.now();
    instance.start();
    expect(state.running).toBe(true);
    // The round at start ran; the next tick is one interval later.
    const next = state.nextRoundAt?.getTime() ?? 0;
    expect(next).toBeGreaterThanOrEqual(before + 50);
    expect(next).toBeLessThanOrEqual(Date.now() + 50);
    // The first round at start, then one per interval (bounded wait: the machine may be busy).
    await expect.poll(() => rounds, { timeout: 5_000, interval: 10 }).toBeGreaterThanOrEqual(3);
    // Each tick moves it on.
    expect(state.nextRoundAt?.getTime()).toBeGreaterThan(next);
    await instance.stop();
    expect(state.running).toBe(false);
    expect(state.nextRoundAt).toBeNull();
    const after = rounds;
    await sleep(120);
    expect(rounds).toBe(after);
  });

  it("never starts with an interval of 0", async () => {
    let rounds = 0;
    const { instance, state } = scheduler({ intervalMs: 0, round: async () => void rounds++ });
    instance.start();
    await sleep(50);
    expect(state.running).toBe(false);
    expect(state.nextRoundAt).toBeNull();
    expect(rounds).toBe(0);
  });

  it("skips a tick while its previous round is still running: rounds never overlap", async () => {
    let concurrent = 0;
    let maxConcurrent = 0;
    let rounds = 0;
    const { instance, logs } = scheduler({
      intervalMs: 30,
      round: async () => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await sleep(100);
        concurrent--;
        rounds++;
      },
    });
    const skipped = () =>
      logs.lines.filter((line) =>
        String((line.fields as { message?: string }).message).includes("still running"),
      ).length;
    instance.start();
    await expect.poll(() => rounds, { timeout: 5_000, interval: 10 }).toBeGreaterThanOrEqual(2);
    await expect.poll(skipped, { timeout: 5_000, interval: 10 }).toBeGreaterThanOrEqual(2);
    await instance.stop();
    expect(maxConcurrent).toBe(1);
  });

  it("a direct tick during a round answers still_running", async () => {
    let release: () => void = () => {};
    const { instance } = scheduler({
      intervalMs: 60_000,
      round: () => new Promise<void>((resolve) => (release = resolve)),
    });
    const first = instance.tick();
    expect(await instance.tick()).toBe("still_running");
    release();
    expect(await first).toBe("ran");
  });

  it("two schedulers sharing a lease run each round slot once between them", async () => {
    const shared = memoryLease();
    const ran: string[] = [];
    const a = scheduler({
      intervalMs: 40,
      round: async () => void ran.push("a"),
      lease: shared.lease,
    });
    const b = scheduler({
      intervalMs: 40,
      round: async () => void ran.push("b"),
      lease: shared.lease,
    });
    a.instance.start();
    await sleep(15);
    b.instance.start();
    await expect.poll(() => ran.length, { timeout: 5_000, interval: 10 }).toBeGreaterThanOrEqual(4);
    await Promise.all([a.instance.stop(), b.instance.stop()]);
    expect(ran.length).toBe(shared.claimed.size);
  });

  it("keeps going after a failed round and releases the lease each time", async () => {
    const shared = memoryLease();
    let rounds = 0;
    const { instance } = scheduler({
      intervalMs: 30,
      lease: shared.lease,
      round: async () => {
        rounds++;
        throw new Error("code host down");
      },
    });
    instance.start();
    await expect.poll(() => rounds, { timeout: 5_000, interval: 10 }).toBeGreaterThanOrEqual(2);
    await instance.stop();
    expect(shared.events.filter((e) => e === "acquire").length).toBe(rounds);
    expect(shared.events.filter((e) => e === "release").length).toBe(rounds);
  });

  it("renews the lease while a long round runs", async () => {
    const shared = memoryLease();
    const renewals = () => shared.events.filter((e) => e === "renew").length;
    const { instance } = scheduler({
      intervalMs: 60_000,
      lease: shared.lease,
      renewEveryMs: 20,
      // The round lasts until the lease has been renewed three times (bounded: it fails after).
      round: () => expect.poll(renewals, { timeout: 5_000, interval: 5 }).toBeGreaterThanOrEqual(3),
    });
    expect(await instance.tick()).toBe("ran");
    expect(shared.events[0]).toBe("acquire");
    expect(renewals()).toBeGreaterThanOrEqual(3);
    expect(shared.events.at(-1)).toBe("release");
  });

  it("stop tells the round in progress to wind up, waits for it, and cannot be restarted", async () => {
    let finished = false;
    let roundStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => (roundStarted = resolve));
    const { instance, state } = scheduler({
      intervalMs: 60_000,
      round: async (signal) => {
        roundStarted();
        // The round runs until told to wind up (bounded: the test fails if it never is).
        await expect.poll(() => signal.aborted, { timeout: 5_000, interval: 5 }).toBe(true);
        finished = true;
      },
    });
    instance.start();
    await started;
    expect(finished).toBe(false);
    await instance.stop();
    expect(finished).toBe(true);
    instance.start();
    expect(state.running).toBe(false);
  });
});
