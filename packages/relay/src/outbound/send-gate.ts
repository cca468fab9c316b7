import { type Clock, systemClock } from "@rd/common";

/**
 * The process-wide brake on outbound delivery (`send_delay_secs`): one delivery attempt at a
 * time, and at least the delay between the starts of two attempts, in arrival order.
 * A delay of 0 removes the gate: attempts run in parallel.
 */
export interface SendGate {
  /** Runs `attempt` when the gate lets it through; resolves or rejects with its result. */
  run<T>(attempt: () => Promise<T>): Promise<T>;
  /**
   * Lets nothing through any more, at shutdown: an attempt still waiting for its turn never
   * starts and its promise never settles (its queue entry, still claimed, is taken up again
   * after the restart), and no wait of up to `send_delay_secs` keeps the process alive.
   */
  close(): void;
}

/** What an attempt the closed gate holds back gets: a promise that never settles. */
const never = <T>() => new Promise<T>(() => undefined);

/**
 * @param delaySecs read at every attempt, so a `PUT /ratelimit` takes effect on the next one.
 */
export function createSendGate(delaySecs: () => number, clock: Clock = systemClock): SendGate {
  // FIFO: each gated attempt waits for the previous one to settle.
  let tail: Promise<unknown> = Promise.resolve();
  let lastStart = Number.NEGATIVE_INFINITY;
  const closing = new AbortController();

  return {
    run<T>(attempt: () => Promise<T>): Promise<T> {
      if (closing.signal.aborted) return never<T>();
      if (delaySecs() <= 0) {
        lastStart = clock.now().getTime();
        return attempt();
      }
      const turn = tail.then(async () => {
        const wait = lastStart + delaySecs() * 1000 - clock.now().getTime();
        if (wait > 0) await clock.sleep(wait, closing.signal).catch(() => undefined);
        if (closing.signal.aborted) return never<T>();
        lastStart = clock.now().getTime();
        return attempt();
      });
      tail = turn.catch(() => undefined);
      return turn;
    },
    close: () => closing.abort(),
  };
}
