import { type Clock, type Logger, messageOf } from "@rd/common";
import { type Static, Type } from "@sinclair/typebox";
import { domainOf } from "../addresses/email-address.js";
import type { RelayConfig } from "../config/schema.js";
import type { DeliveryAttempt } from "../outbound/delivery-attempt.js";
import {
  type DeliveryEvent,
  deferredEvent,
  deliveredEvent,
  failedEvent,
} from "../outbound/delivery-events.js";
import type { QueueRepository, QueueRow } from "../state/queue-repository.js";
import { afterFailedAttempt } from "./queue-backoff.js";
import type { SpoolStore } from "./spool-store.js";

/**
 * The answer of `POST /queue/tick` (wire contract: the field names are kept as specified).
 * `ok` is false when an entry could not be processed for a local reason (logged); it is retried
 * later.
 */
export const TickReportSchema = Type.Object({
  ok: Type.Boolean(),
  ocupado: Type.Boolean({ description: "another tick was running; this one did nothing" }),
  tentados: Type.Integer(),
  entregues: Type.Integer(),
  falhos: Type.Integer(),
  reagendados: Type.Integer(),
});
export type TickReport = Static<typeof TickReportSchema>;

/**
 * Deliveries a tick runs at once when `send_delay_secs` is 0 (no gate). With a delay the gate
 * lets one attempt through at a time, so the tick takes one entry at a time too: an entry is
 * `sending` only while it is really being attempted.
 */
export const TICK_CONCURRENCY = 16;

const SECOND_MS = 1000;
const DAY_SECS = 86_400;

export const SPOOL_FILE_MISSING = "message body lost: its spool file is missing";

export interface QueueWorkerDeps {
  queue: QueueRepository;
  spool: SpoolStore;
  /** The same attempt as synchronous delivery: MX, transport, send gate, `attempt` events. */
  attempt: DeliveryAttempt;
  emit: (event: DeliveryEvent) => void;
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
   * Starts a tick in the background now, or right after the tick in hand (whose due list may
   * predate the rows just queued); its outcome is logged. The SMTP port uses it in synchronous
   * mode to deliver a message at once after persisting it.
   */
  tickSoon(): void;
  /** Takes no new entry from now on; resolves when the tick in hand has finished. */
  stop(): Promise<void>;
}

function emptyReport(ocupado: boolean): TickReport {
  return { ok: true, ocupado, tentados: 0, entregues: 0, falhos: 0, reagendados: 0 };
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
  const nowSecs = () => Math.floor(clock.now().getTime() / SECOND_MS);
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
    if (row.spool_file === null) return undefined;
    try {
      return await spool.read(row.spool_file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async function deliver(row: QueueRow, report: TickReport): Promise<void> {
    const config = deps.config();
    const attempts = row.attempts + 1;
    const base = { message_id: row.message_id, rcpt: row.rcpt };
    report.tentados += 1;

    const raw = await readBody(row);
    if (raw === undefined) {
      queue.markFailed(row.pk, {
        attempts: row.attempts,
        lastError: SPOOL_FILE_MISSING,
        now: nowSecs(),
      });
      deps.emit({ event: "failed", ...base, permanent: true, error: SPOOL_FILE_MISSING });
      report.falhos += 1;
      return;
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
      queue.markSent(row.pk, { attempts, now: nowSecs() });
      deps.emit(deliveredEvent(base, outcome.receipt, attempts));
      report.entregues += 1;
      await finish(row);
      return;
    }

    const { error } = outcome;
    const next = afterFailedAttempt(attempts, error.permanent, config.queue_backoff_secs);
    if (next.action === "fail") {
      queue.markFailed(row.pk, { attempts, lastError: error.message, now: nowSecs() });
      deps.emit(failedEvent(base, error));
      report.falhos += 1;
      await finish(row);
      return;
    }
    queue.reschedule(row.pk, {
      attempts,
      lastError: error.message,
      // NOTE: rows keep whole epoch seconds; a fractional wait (tests) rounds up.
      nextAttemptAt: Math.ceil((clock.now().getTime() + next.waitSecs * SECOND_MS) / SECOND_MS),
      now: nowSecs(),
    });
    deps.emit(deferredEvent(base, error, next.waitSecs));
    report.reagendados += 1;
  }

  /** Puts a row that hit a local failure back in the queue, due now, attempts unchanged. */
  function release(row: QueueRow, error: unknown): void {
    const message = messageOf(error);
    logger.error("queue entry could not be processed; it stays queued", {
      pk: row.pk,
      message_id: row.message_id,
      error: message,
    });
    try {
      queue.reschedule(row.pk, {
        attempts: row.attempts,
        lastError: `local error: ${message}`,
        nextAttemptAt: nowSecs(),
        now: nowSecs(),
      });
    } catch {
      // The database itself failed: boot recovery will put the row back.
    }
  }

  async function drain(): Promise<TickReport> {
    const report = emptyReport(false);
    const config = deps.config();
    const removed = queue.deleteFinishedBefore(nowSecs() - config.retention_days * DAY_SECS);
    if (removed > 0) logger.info("finished deliveries past retention removed", { count: removed });

    // The due rows as the tick starts: an entry rescheduled by this tick waits for the next.
    const due = queue.duePks(nowSecs());
    const width = config.send_delay_secs > 0 ? 1 : TICK_CONCURRENCY;
    let next = 0;
    const lane = async () => {
      while (!stopping && next < due.length) {
        const pk = due[next++] as number;
        const row = queue.claim(pk, nowSecs());
        if (!row) continue;
        try {
          await deliver(row, report);
        } catch (error) {
          report.ok = false;
          release(row, error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(width, due.length) }, lane));
    return report;
  }

  let tickAgain = false;

  async function tick(): Promise<TickReport> {
    if (running || stopping) return emptyReport(true);
    running = drain();
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

  function tickSoon(): void {
    if (stopping) return;
    if (running) {
      tickAgain = true;
      return;
    }
    tick()
      .then((report) => {
        if (report.tentados > 0) logger.info("queue tick", { ...report });
      })
      .catch((error: Error) => logger.error("queue tick failed", { error: error.message }));
  }

  return {
    tick,
    tickSoon,
    async stop() {
      stopping = true;
      await running?.catch(() => undefined);
    },
  };
}
