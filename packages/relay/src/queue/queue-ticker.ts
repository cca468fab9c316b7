import type { Logger } from "@rd/common";
import type { HandOver } from "./queue-handover.js";
import type { QueueWorker } from "./queue-worker.js";

export interface QueueTicker {
  /** Starts ticking every `intervalSecs` (0: never); a second start is ignored. */
  start(): void;
  /**
   * Entries were just queued: with the ticker running they are attempted at once (`tickSoon`),
   * not at the next tick. Stopped, or off (`tick_interval_secs: 0`: only explicit ticks drain),
   * it does nothing.
   */
  wake(): void;
  /** The worker's hand-over while wake-ups attempt at once; with the ticker stopped or off, none. */
  readonly handOver: HandOver;
  /** No further tick starts; resolves once the tick in hand (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * The internal ticker (`tick_interval_secs`): the server drains its own queue on this period.
 * The next tick is scheduled when one ends, so a slow tick never piles up behind itself.
 */
export function createQueueTicker(deps: {
  worker: QueueWorker;
  intervalSecs: number;
  logger: Logger;
}): QueueTicker {
  const { worker, intervalSecs, logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let started = false;
  let stopped = false;
  let wakeScheduled = false;

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(run, intervalSecs * 1000);
    // A pending tick alone must not keep the process alive.
    timer.unref();
  };

  function run() {
    inFlight = worker
      .tick()
      .then((report) => {
        if (report.tentados > 0) logger.info("queue tick", { ...report });
      })
      .catch((error: Error) => logger.error("queue tick failed", { error: error.message }))
      .finally(() => {
        inFlight = undefined;
        schedule();
      });
  }

  return {
    start() {
      if (started || intervalSecs <= 0) return;
      started = true;
      schedule();
    },
    wake() {
      if (!started || stopped || wakeScheduled) return;
      // After the current I/O callbacks: the sender's answer goes out first, and the
      // acceptances of one turn of the event loop share one wake-up.
      wakeScheduled = true;
      setImmediate(() => {
        wakeScheduled = false;
        if (!stopped) worker.tickSoon();
      });
    },
    handOver: {
      ...worker.handOver,
      reserve: (count) => started && !stopped && worker.handOver.reserve(count),
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
