import type { Clock } from "../clock.js";

interface Sleeper {
  readonly due: number;
  readonly resolve: () => void;
}

/** 2026-01-15T12:00:00Z: a whole minute, far from any day or month boundary. */
const DEFAULT_START = Date.UTC(2026, 0, 15, 12, 0, 0);

/**
 * A clock the test moves by hand: `advance(ms)` moves `now()` and wakes the sleeps that are due,
 * in the order they fall due.
 */
export class ManualClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];

  constructor(start: Date | number = DEFAULT_START) {
    this.current = typeof start === "number" ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = {
        due: this.current + ms,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((other) => other !== sleeper);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.sleepers.push(sleeper);
    });
  }

  /** Moves the time forward by `ms` and wakes every sleep due by then. */
  advance(ms: number): void {
    this.current += ms;
    const due = this.sleepers
      .filter((sleeper) => sleeper.due <= this.current)
      .sort((a, b) => a.due - b.due);
    this.sleepers = this.sleepers.filter((sleeper) => sleeper.due > this.current);
    for (const sleeper of due) sleeper.resolve();
  }

  /**
   * Waits for `work`, moving the time to each sleep's due moment as the sleeps come: for code
   * that waits on the clock between real I/O (a gate, retries), without choosing the steps.
   */
  async settle<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    const markSettled = () => {
      settled = true;
    };
    work.then(markSettled, markSettled);
    while (!settled) {
      // NOTE: a macrotask, so that real I/O and timers progress between two moves.
      await new Promise((resolve) => setTimeout(resolve, 1));
      const next = Math.min(...this.sleepers.map((sleeper) => sleeper.due));
      if (Number.isFinite(next)) this.advance(next - this.current);
    }
    return work;
  }

  /** How many sleeps are waiting for the time to move. */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }
}
