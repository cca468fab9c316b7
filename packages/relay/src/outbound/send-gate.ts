import { type Clock, systemClock } from "@rd/common";

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
export function createSendGate(delaySecs: () => number, clock: Clock = systemClock): SendGate {
  // FIFO: each gated attempt waits for the previous one to settle.
  let tail: Promise<unknown> = Promise.resolve();
  let lastStart = Number.NEGATIVE_INFINITY;

  return {
    run(attempt) {
      if (delaySecs() <= 0) {
        lastStart = clock.now().getTime();
        return attempt();
      }
      const turn = tail.then(async () => {
        const wait = lastStart + delaySecs() * 1000 - clock.now().getTime();
        if (wait > 0) await clock.sleep(wait);
        lastStart = clock.now().getTime();
        return attempt();
      });
      tail = turn.catch(() => undefined);
      return turn;
    },
  };
}
