import { setTimeout as delay } from "node:timers/promises";

/** The time source of everything that reads the time or waits; tests move a `ManualClock` instead of sleeping. */
export interface Clock {
  now(): Date;
  /** Resolves after `ms` milliseconds; rejects with the signal's reason once it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The clock's time in whole epoch seconds (rounded down): how stored rows keep times. */
export function epochSeconds(clock: Pick<Clock, "now">): number {
  return Math.floor(clock.now().getTime() / 1000);
}

export const systemClock: Clock = {
  now: () => new Date(),
  async sleep(ms, signal) {
    // NOTE: a timer counts from the event loop's cached time, so it may wake a few ms before
    // `now()` has moved by `ms` (a send gate would let an attempt through early): the rest is
    // slept again.
    const until = Date.now() + ms;
    try {
      let left = ms;
      do {
        await delay(left, undefined, signal && { signal });
        left = until - Date.now();
      } while (left > 0);
    } catch (error) {
      // NOTE: node:timers/promises rejects with its own AbortError; callers expect the reason.
      throw signal?.aborted ? signal.reason : error;
    }
  },
};
