import { setTimeout as sleep } from "node:timers/promises";
import { createLogging } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";
import { createQueueTicker } from "./queue-ticker.js";
import type { QueueWorker } from "./queue-worker.js";
import type { TickReport } from "./tick-report.js";

const idle: TickReport = {
  ok: true,
  ocupado: false,
  tentados: 0,
  entregues: 0,
  falhos: 0,
  reagendados: 0,
};

/** A worker that counts ticks; each tick lasts `tickMs`. */
function countingWorker(tickMs = 0) {
  const state = { ticks: 0, running: 0, maxRunning: 0 };
  const worker: QueueWorker = {
    async tick() {
      state.ticks += 1;
      state.running += 1;
      state.maxRunning = Math.max(state.maxRunning, state.running);
      await sleep(tickMs);
      state.running -= 1;
      return idle;
    },
    tickSoon: () => undefined,
    handOver: { reserve: () => true, cancel: () => undefined, deliver: () => undefined },
    stop: async () => undefined,
  };
  return { worker, state };
}

const logger = () => createLogging({ destination: new LogCapture() }).forTarget("relay::queue");

describe("queue ticker", () => {
  it("ticks on its period until stopped", async () => {
    const { worker, state } = countingWorker();
    const ticker = createQueueTicker({ worker, intervalSecs: 0.02, logger: logger() });
    ticker.start();
    await expect.poll(() => state.ticks, { timeout: 2000 }).toBeGreaterThanOrEqual(3);
    await ticker.stop();
    const after = state.ticks;
    await sleep(100);
    expect(state.ticks).toBe(after);
  });

  it("never overlaps itself when a tick outlasts the period", async () => {
    const { worker, state } = countingWorker(60);
    const ticker = createQueueTicker({ worker, intervalSecs: 0.01, logger: logger() });
    ticker.start();
    await expect.poll(() => state.ticks, { timeout: 2000 }).toBeGreaterThanOrEqual(3);
    await ticker.stop();
    expect(state.maxRunning).toBe(1);
  });

  it("stop waits for the tick in hand", async () => {
    const { worker, state } = countingWorker(150);
    const ticker = createQueueTicker({ worker, intervalSecs: 0.01, logger: logger() });
    ticker.start();
    await expect.poll(() => state.running, { timeout: 2000 }).toBe(1);
    await ticker.stop();
    expect(state.running).toBe(0);
  });

  it("with an interval of 0 never ticks", async () => {
    const { worker, state } = countingWorker();
    const ticker = createQueueTicker({ worker, intervalSecs: 0, logger: logger() });
    ticker.start();
    await sleep(100);
    await ticker.stop();
    expect(state.ticks).toBe(0);
  });

  it("hands entries over to its worker only while it runs", async () => {
    const { worker } = countingWorker();
    const ticker = createQueueTicker({ worker, intervalSecs: 60, logger: logger() });
    expect(ticker.handOver.reserve(1)).toBe(false);
    ticker.start();
    expect(ticker.handOver.reserve(1)).toBe(true);
    await ticker.stop();
    expect(ticker.handOver.reserve(1)).toBe(false);
  });

  it("with an interval of 0 (only explicit ticks drain) hands nothing over", () => {
    const { worker } = countingWorker();
    const ticker = createQueueTicker({ worker, intervalSecs: 0, logger: logger() });
    ticker.start();
    expect(ticker.handOver.reserve(1)).toBe(false);
  });
});
