import { type Clock, epochSeconds, type Logger, messageOf, runOutsideRequests } from "@rd/common";
import { domainOf } from "../addresses/email-address.js";
import type { RelayConfig } from "../config/schema.js";
import type { DeliveryAttempt } from "../outbound/delivery-attempt.js";
import {
  type DeliveryEvent,
  deferredEvent,
  deliveredEvent,
  failedEvent,
} from "../outbound/delivery-events.js";
import type { PermanentFailureHandler } from "../outbound/outbound.js";
import type { QueueRow, QueueStore } from "../state/queue-repository.js";
import { afterFailedAttempt } from "./queue-backoff.js";
import { createHandOver, type HandOver } from "./queue-handover.js";
import type { SpoolStore } from "./spool-store.js";
import { emptyReport, type TickReport } from "./tick-report.js";

/**
 * Deliveries a tick runs at once when `send_delay_secs` is 0 (no gate). With a delay the gate
 * lets one attempt through at a time, so the tick takes one entry at a time too: an entry is
 * `sending` only while it is really being attempted.
 */
export const TICK_CONCURRENCY = 16;

const SECOND_MS = 1000;
const DAY_SECS = 86_400;

export const SPOOL_FILE_MISSING = "message body lost: its spool file is missing";
/**
 * `last_error` of a synchronous delivery's row claimed once its lease lapsed (shared database):
 * the instance delivering it died, and the body lived only in that request.
 */
export const SYNC_DELIVERY_INTERRUPTED =
  "synchronous delivery interrupted: the instance sending it stopped, and its body lived only in the request";

export interface QueueWorkerDeps {
  queue: QueueStore;
  spool: SpoolStore;
  /** The same attempt as synchronous delivery: MX, transport, send gate, `attempt` events. */
  attempt: DeliveryAttempt;
  emit: (event: DeliveryEvent) => void;
  /** Told of a recipient that failed permanently (the suppression list). */
  onPermanentFailure?: PermanentFailureHandler;
  /** Whether mail from a sender domain must leave over TLS (outbound's rule). */
  requireTls: (domain: string) => boolean;
  /** Read at every tick: backoff, retention, `send_delay_secs`. */
  config: () => RelayConfig;
  clock: Clock;
  logger: Logger;
}

export interface QueueWorker {
  /** Drains what is due (reentrant: a tick during a tick answers `ocupado` and does nothing). */
  tick(): Promise<TickReport>;
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
 * makes one attempt: `sent`, rescheduled (`queued` after the backoff) or `failed` (5th attempt,
 * or a permanent error). The entry's file leaves the spool when it is `sent` or `failed`.
 *
 * Nothing about the client or the domain's kit is checked again: the message was signed and
 * authorised when accepted, so removing a client or a domain does not stop queued mail.
 */
export function createQueueWorker(deps: QueueWorkerDeps): QueueWorker {
  const { queue, spool, clock, logger } = deps;
  const nowSecs = () => epochSeconds(clock);
  let running: Promise<TickReport> | undefined;
  let stopping = false;

  async function finish(row: QueueRow): Promise<void> {
    if (row.spool_file === null) return;
    // After the row: a crash in between leaves a file no pending row names, which recovery removes.
    await spool.remove(row.spool_file).catch((error: Error) => {
      logger.warn("spool file could not be removed", { pk: row.pk, error: error.message });
    });
  }

  /** The entry's message; undefined when its spool file is gone (other failures throw). */
  async function readBody(row: QueueRow): Promise<Buffer | undefined> {
    if (row.body) return row.body;
    if (row.spool_file === null) return undefined;
    try {
      return await spool.read(row.spool_file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  /** One attempt for a claimed entry; true when the entry was rescheduled. */
  async function deliver(row: QueueRow, report: TickReport): Promise<boolean> {
    const config = deps.config();
    const attempts = row.attempts + 1;
    const base = { message_id: row.message_id, rcpt: row.rcpt };
    report.tentados += 1;

    const raw = await readBody(row);
    if (raw === undefined) {
      // No spool file and no body in the database: a synchronous delivery's row.
      const lost = row.spool_file === null ? SYNC_DELIVERY_INTERRUPTED : SPOOL_FILE_MISSING;
      await queue.markFailed(row.pk, { attempts: row.attempts, lastError: lost, now: nowSecs() });
      deps.emit({ event: "failed", ...base, permanent: true, error: lost });
      report.falhos += 1;
      return false;
    }

    const outcome = await deps.attempt(
      {
        messageId: row.message_id,
        envelopeFrom: row.envelope_from,
        rcpt: row.rcpt,
        raw,
        requireTls: deps.requireTls(domainOf(row.envelope_from)),
      },
      attempts,
    );

    if (outcome.ok) {
      await queue.markSent(row.pk, { attempts, now: nowSecs() });
      deps.emit(deliveredEvent(base, outcome.receipt, attempts));
      report.entregues += 1;
      await finish(row);
      return false;
    }

    const { error } = outcome;
    const next = afterFailedAttempt(attempts, error.permanent, config.queue_backoff_secs);
    if (next.action === "fail") {
      await queue.markFailed(row.pk, { attempts, lastError: error.message, now: nowSecs() });
      deps.emit(failedEvent(base, error));
      if (error.permanent) {
        await deps.onPermanentFailure?.({
          clientId: row.client_id,
          rcpt: row.rcpt,
          reason: error.message,
        });
      }
      report.falhos += 1;
      await finish(row);
      return false;
    }
    await queue.reschedule(row.pk, {
      attempts,
      lastError: error.message,
      // NOTE: rows keep whole epoch seconds; a fractional wait (tests) rounds up.
      nextAttemptAt: Math.ceil((clock.now().getTime() + next.waitSecs * SECOND_MS) / SECOND_MS),
      now: nowSecs(),
    });
    deps.emit(deferredEvent(base, error, next.waitSecs));
    report.reagendados += 1;
    return true;
  }

  /** Puts a row that hit a local failure back in the queue, due now, attempts unchanged. */
  async function release(row: QueueRow, error: unknown): Promise<void> {
    const message = messageOf(error);
    logger.error("queue entry could not be processed; it stays queued", {
      pk: row.pk,
      message_id: row.message_id,
      error: message,
    });
    try {
      await queue.reschedule(row.pk, {
        attempts: row.attempts,
        lastError: `local error: ${message}`,
        nextAttemptAt: nowSecs(),
        now: nowSecs(),
      });
    } catch {
      // The database itself failed: boot recovery will put the row back.
    }
  }

  /** One drain: the due list it works through, its lanes, and what it did. */
  interface Drain {
    readonly report: TickReport;
    readonly width: number;
    /** Takes entries that become due while it runs (`tickSoon`), not only the first list. */
    readonly continuous: boolean;
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
        const rescheduled = await deliver(row, run.report);
        if (rescheduled) run.rescheduled.add(pk);
      } catch (error) {
        run.report.ok = false;
        run.rescheduled.add(pk);
        await release(row, error);
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
          logger.error("queue drain lane stopped", { error: messageOf(error) });
        })
        .finally(() => run.lanes.delete(started));
      run.lanes.add(started);
    }
  }

  async function drain(continuous: boolean): Promise<TickReport> {
    const config = deps.config();
    if (!continuous) {
      const removed = await queue.deleteFinishedBefore(
        nowSecs() - config.retention_days * DAY_SECS,
      );
      if (removed > 0)
        logger.info("finished deliveries past retention removed", { count: removed });
    }
    const run: Drain = {
      report: emptyReport(false),
      width: config.send_delay_secs > 0 ? 1 : TICK_CONCURRENCY,
      continuous,
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

  async function runDrain(continuous: boolean): Promise<TickReport> {
    if (running || stopping) return emptyReport(true);
    running = drain(continuous);
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

  const tick = () => runDrain(false);

  // NOTE: an acceptance wakes the queue inside its HTTP request, but what the wake starts serves
  // every message queued by then: its log lines are part of no request (see `runOutsideRequests`).
  const tickSoon = (): void => runOutsideRequests(wake);

  function wake(): void {
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
      runOutsideRequests(() =>
        deliver(row, emptyReport(false)).then(
          () => undefined,
          (error: unknown) => release(row, error),
        ),
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
