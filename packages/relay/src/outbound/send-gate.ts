import { type Clock, neverSettles, systemClock } from "@rd/common";

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
 * @param closing aborted at shutdown: from then on the gate lets nothing through. An attempt
 * still waiting for its turn never starts and its promise never settles (its queue entry, still
 * claimed, is taken up again after the restart), and no wait of up to `send_delay_secs` keeps
 * the process alive.
 */
export function createSendGate(
  delaySecs: () => number,
  clock: Clock = systemClock,
  closing?: AbortSignal,
): SendGate {
  // FIFO: each gated attempt waits for the previous one to settle.
  let tail: Promise<unknown> = Promise.resolve();
  let lastStart = Number.NEGATIVE_INFINITY;

  return {
    run<T>(attempt: () => Promise<T>): Promise<T> {
      if (closing?.aborted) return neverSettles<T>();
      if (delaySecs() <= 0) {
        lastStart = clock.now().getTime();
        return attempt();
      }
      const turn = tail.then(async () => {
        const wait = lastStart + delaySecs() * 1000 - clock.now().getTime();
        if (wait > 0) await clock.sleep(wait, closing).catch(() => undefined);
        if (closing?.aborted) return neverSettles<T>();
        lastStart = clock.now().getTime();
        return attempt();
      });
      tail = turn.catch(() => undefined);
      return turn;
    },
  };
}
