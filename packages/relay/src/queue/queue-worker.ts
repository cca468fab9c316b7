import { epochSeconds, messageOf, withRequest } from "@rd/common";
import { createEntryAttempts, type EntryAttemptDeps } from "./entry-attempt.js";
import { createHandOver, type HandOver } from "./queue-handover.js";
import { emptyReport, type TickReport } from "./tick-report.js";

/**
 * Deliveries a tick runs at once when `send_delay_secs` is 0 (no gate). With a delay the gate
 * lets one attempt through at a time, so the tick takes one entry at a time too: an entry is
 * `sending` only while it is really being attempted.
 */
export const TICK_CONCURRENCY = 16;

const DAY_SECS = 86_400;

/** What the worker needs: what each attempt needs (`entry-attempt.ts`). */
export type QueueWorkerDeps = EntryAttemptDeps;

export interface QueueWorker {
  /**
   * Drains what is due (reentrant: a tick during a tick answers `ocupado` and does nothing).
   * `requestId`: the HTTP request that asked for it (`POST /queue/tick`), on its deliveries' lines.
   */
  tick(requestId?: string): Promise<TickReport>;
  /**
   * New entries are due: attempts them now, in the background (subject to the send gate), and
   * logs the outcome. A drain started this way keeps taking entries that become due while it
   * runs, so mail accepted under a steady load never waits for a tick; it skips retention (the
   * ticks do it). During a `tick()` the entries wait for a drain that starts right after it.
   * The SMTP port calls it in synchronous mode, the ticker on every acceptance.
   */
  tickSoon(): void;
  /** Entries the intake wrote already claimed, attempted at once (`queue-handover.ts`). */
  readonly handOver: HandOver;
  /** Takes no new entry from now on; resolves when the attempts in hand have finished. */
  stop(): Promise<void>;
}

/**
 * The queue worker. A tick first deletes the finished rows past `retention_days`, then takes
 * the due rows (`queued`, `next_attempt_at <= now`) oldest first, each `queued → sending`, and
 * makes one attempt (`entry-attempt.ts`).
 *
 * Nothing about the client or the domain's kit is checked again: the message was signed and
 * authorised when accepted, so removing a client or a domain does not stop queued mail.
 */
export function createQueueWorker(deps: QueueWorkerDeps): QueueWorker {
  const { queue, clock, logger } = deps;
  const nowSecs = () => epochSeconds(clock);
  const { deliver, release } = createEntryAttempts(deps);
  let running: Promise<TickReport> | undefined;
  let stopping = false;

  /** One drain: the due list it works through, its lanes, and what it did. */
  interface Drain {
    readonly report: TickReport;
    readonly width: number;
    /** Takes entries that become due while it runs (`tickSoon`), not only the first list. */
    readonly continuous: boolean;
    /** The HTTP request it runs for (`POST /queue/tick`), if any. */
    readonly requestId: string | undefined;
    due: number[];
    next: number;
    /** Entries became due since `due` was read. */
    stale: boolean;
    /** Reads of the due list started; only the latest one's answer is kept. */
    reads: number;
    /** Entries this drain rescheduled: they wait for a later drain, even when due at once. */
    readonly rescheduled: Set<number>;
    readonly lanes: Set<Promise<void>>;
  }

  const dueFor = async (run: Drain) =>
    (await queue.duePks(nowSecs())).filter((pk) => !run.rescheduled.has(pk));

  /** The next entry for a lane, reading the due list again when new entries came in. */
  async function nextPk(run: Drain): Promise<number | undefined> {
    if (run.next >= run.due.length && run.continuous && run.stale) {
      run.stale = false;
      const read = ++run.reads;
      const due = await dueFor(run);
      // Two lanes may read at once (entries came in during a read); a shared database can answer
      // the older read last, whose list lacks the newest entries: they would wait for a tick.
      if (read !== run.reads) return run.due[run.next++];
      run.due = due;
      run.next = 0;
      // Lanes that ran out earlier have exited: the new entries may use them again.
      queueMicrotask(() => widen(run));
    }
    return run.due[run.next++];
  }

  async function lane(run: Drain): Promise<void> {
    for (let pk = await nextPk(run); !stopping && pk !== undefined; pk = await nextPk(run)) {
      const row = await queue.claim(pk, nowSecs());
      if (!row) continue;
      try {
        const rescheduled = await deliver(row, run.report, run.requestId);
        if (rescheduled) run.rescheduled.add(pk);
      } catch (error) {
        run.report.ok = false;
        run.rescheduled.add(pk);
        await release(row, error, run.requestId);
      }
    }
  }

  /** Starts lanes up to the drain's width while it has entries for them. */
  function widen(run: Drain): void {
    const waiting = () => run.next < run.due.length || (run.continuous && run.stale);
    while (!stopping && run.lanes.size < run.width && waiting()) {
      // A lane that fails outside an entry's attempt (its store did not answer a read or a
      // claim) ends; the drain reports it, and the entries wait for the next one.
      const started: Promise<void> = lane(run)
        .catch((error: unknown) => {
          run.report.ok = false;
          logger.error(
            "queue drain lane stopped",
            withRequest({ error: messageOf(error) }, run.requestId),
          );
        })
        .finally(() => run.lanes.delete(started));
      run.lanes.add(started);
    }
  }

  async function drain(continuous: boolean, requestId?: string): Promise<TickReport> {
    const config = deps.config();
    if (!continuous) {
      const removed = await queue.deleteFinishedBefore(
        nowSecs() - config.retention_days * DAY_SECS,
      );
      if (removed > 0) {
        logger.info(
          "finished deliveries past retention removed",
          withRequest({ count: removed }, requestId),
        );
      }
    }
    const run: Drain = {
      report: emptyReport(false),
      width: config.send_delay_secs > 0 ? 1 : TICK_CONCURRENCY,
      continuous,
      requestId,
      // The due rows as the tick starts: an entry rescheduled by this tick waits for the next.
      due: await queue.duePks(nowSecs()),
      next: 0,
      stale: false,
      reads: 0,
      rescheduled: new Set(),
      lanes: new Set(),
    };
    current = run;
    widen(run);
    while (run.lanes.size > 0) await Promise.all(run.lanes);
    current = undefined;
    return run.report;
  }

  let current: Drain | undefined;
  let tickAgain = false;

  async function runDrain(continuous: boolean, requestId?: string): Promise<TickReport> {
    if (running || stopping) return emptyReport(true);
    running = drain(continuous, requestId);
    try {
      return await running;
    } finally {
      running = undefined;
      if (tickAgain) {
        tickAgain = false;
        tickSoon();
      }
    }
  }

  const tick = (requestId?: string) => runDrain(false, requestId);

  function tickSoon(): void {
    if (stopping) return;
    if (current?.continuous) {
      current.stale = true;
      widen(current);
      return;
    }
    if (running) {
      tickAgain = true;
      return;
    }
    runDrain(true)
      .then((report) => {
        if (report.tentados > 0) logger.info("queue tick", { ...report });
      })
      .catch((error: Error) => logger.error("queue tick failed", { error: error.message }));
  }

  const handOver = createHandOver({
    attempt: (row) =>
      deliver(row, emptyReport(false), undefined).then(
        () => undefined,
        (error: unknown) => release(row, error, undefined),
      ),
    open: () => !stopping && deps.config().send_delay_secs === 0,
    limit: TICK_CONCURRENCY,
  });

  return {
    tick,
    tickSoon,
    handOver,
    async stop() {
      stopping = true;
      await Promise.all([running?.catch(() => undefined), handOver.settled()]);
    },
  };
}
