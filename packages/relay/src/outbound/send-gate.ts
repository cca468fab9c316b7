import { setTimeout as sleep } from "node:timers/promises";

/** Time as the gate sees it; tests pass a fake that advances instead of sleeping. */
export interface GateTimer {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realTimer: GateTimer = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

/**
 * The process-wide brake on outbound delivery (`send_delay_secs`): one delivery attempt at a
 * time, and at least the delay between the starts of two attempts, in arrival order.
 * A delay of 0 removes the gate: attempts run in parallel.
 */
export interface SendGate {
  /** Runs `attempt` when the gate lets it through; resolves or rejects with its result. */
  run<T>(attempt: () => Promise<T>): Promise<T>;
}

/**
 * @param delaySecs read at every attempt, so a `PUT /ratelimit` takes effect on the next one.
 */
export function createSendGate(delaySecs: () => number, timer: GateTimer = realTimer): SendGate {
  // FIFO: each gated attempt waits for the previous one to settle.
  let tail: Promise<unknown> = Promise.resolve();
  let lastStart = Number.NEGATIVE_INFINITY;

  return {
    run(attempt) {
      if (delaySecs() <= 0) {
        lastStart = timer.now();
        return attempt();
      }
      const turn = tail.then(async () => {
        const wait = lastStart + delaySecs() * 1000 - timer.now();
        if (wait > 0) await timer.sleep(wait);
        lastStart = timer.now();
        return attempt();
      });
      tail = turn.catch(() => undefined);
      return turn;
    },
  };
}
