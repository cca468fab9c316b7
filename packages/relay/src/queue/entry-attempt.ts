import { type Clock, epochSeconds, type Logger, messageOf, withRequest } from "@rd/common";
import { domainOf } from "../addresses/email-address.js";
import type { RelayConfig } from "../config/schema.js";
import type { DeliveryAttempt } from "../outbound/delivery-attempt.js";
import {
  deferredEvent,
  deliveredEvent,
  type EmitDeliveryEvent,
  failedEvent,
} from "../outbound/delivery-events.js";
import type { PermanentFailureHandler } from "../outbound/outbound.js";
import type { QueueRow, QueueStore } from "../state/queue-repository.js";
import { afterFailedAttempt } from "./queue-backoff.js";
import type { SpoolStore } from "./spool-store.js";
import type { TickReport } from "./tick-report.js";

const SECOND_MS = 1000;

export const SPOOL_FILE_MISSING = "message body lost: its spool file is missing";
/**
 * `last_error` of a synchronous delivery's row claimed once its lease lapsed (shared database):
 * the instance delivering it died, and the body lived only in that request.
 */
export const SYNC_DELIVERY_INTERRUPTED =
  "synchronous delivery interrupted: the instance sending it stopped, and its body lived only in the request";

export interface EntryAttemptDeps {
  queue: QueueStore;
  spool: SpoolStore;
  /** The same attempt as synchronous delivery: MX, transport, send gate, `attempt` events. */
  attempt: DeliveryAttempt;
  emit: EmitDeliveryEvent;
  /** Told of a recipient that failed permanently (the suppression list). */
  onPermanentFailure?: PermanentFailureHandler;
  /** Whether mail from a sender domain must leave over TLS (outbound's rule). */
  requireTls: (domain: string) => boolean;
  /** Read at every tick: backoff, retention, `send_delay_secs`. */
  config: () => RelayConfig;
  clock: Clock;
  logger: Logger;
}

/**
 * One attempt of a claimed queue entry and its outcome: `sent`, rescheduled (`queued` after the
 * backoff) or `failed` (5th attempt, or a permanent error), with its ledger events; the entry's
 * file leaves the spool when it is `sent` or `failed`. `requestId`: the HTTP request the attempt
 * runs for (`POST /queue/tick`), if any, on its lines.
 */
export interface EntryAttempts {
  /** One attempt for a claimed entry; true when the entry was rescheduled. */
  deliver(row: QueueRow, report: TickReport, requestId: string | undefined): Promise<boolean>;
  /** Puts a row that hit a local failure back in the queue, due now, attempts unchanged. */
  release(row: QueueRow, error: unknown, requestId: string | undefined): Promise<void>;
}

export function createEntryAttempts(deps: EntryAttemptDeps): EntryAttempts {
  const { queue, spool, clock, logger } = deps;
  const nowSecs = () => epochSeconds(clock);

  async function finish(row: QueueRow, requestId: string | undefined): Promise<void> {
    if (row.spool_file === null) return;
    // After the row: a crash in between leaves a file no pending row names, which recovery removes.
    await spool.remove(row.spool_file).catch((error: Error) => {
      logger.warn(
        "spool file could not be removed",
        withRequest({ pk: row.pk, error: error.message }, requestId),
      );
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

  /**
   * One attempt for a claimed entry; true when the entry was rescheduled. `requestId`: the
   * request the drain runs for, if any.
   */
  async function deliver(
    row: QueueRow,
    report: TickReport,
    requestId: string | undefined,
  ): Promise<boolean> {
    const config = deps.config();
    const attempts = row.attempts + 1;
    const base = { message_id: row.message_id, rcpt: row.rcpt };
    report.tentados += 1;

    const raw = await readBody(row);
    if (raw === undefined) {
      // No spool file and no body in the database: a synchronous delivery's row.
      const lost = row.spool_file === null ? SYNC_DELIVERY_INTERRUPTED : SPOOL_FILE_MISSING;
      await queue.markFailed(row.pk, { attempts: row.attempts, lastError: lost, now: nowSecs() });
      deps.emit({ event: "failed", ...base, permanent: true, error: lost }, requestId);
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
        requestId,
      },
      attempts,
    );

    if (outcome.ok) {
      await queue.markSent(row.pk, { attempts, now: nowSecs() });
      deps.emit(deliveredEvent(base, outcome.receipt, attempts), requestId);
      report.entregues += 1;
      await finish(row, requestId);
      return false;
    }

    const { error } = outcome;
    const next = afterFailedAttempt(attempts, error.permanent, config.queue_backoff_secs);
    if (next.action === "fail") {
      await queue.markFailed(row.pk, { attempts, lastError: error.message, now: nowSecs() });
      deps.emit(failedEvent(base, error), requestId);
      if (error.permanent) {
        await deps.onPermanentFailure?.({
          clientId: row.client_id,
          rcpt: row.rcpt,
          reason: error.message,
          requestId,
        });
      }
      report.falhos += 1;
      await finish(row, requestId);
      return false;
    }
    await queue.reschedule(row.pk, {
      attempts,
      lastError: error.message,
      // NOTE: rows keep whole epoch seconds; a fractional wait (tests) rounds up.
      nextAttemptAt: Math.ceil((clock.now().getTime() + next.waitSecs * SECOND_MS) / SECOND_MS),
      now: nowSecs(),
    });
    deps.emit(deferredEvent(base, error, next.waitSecs), requestId);
    report.reagendados += 1;
    return true;
  }

  /** Puts a row that hit a local failure back in the queue, due now, attempts unchanged. */
  async function release(
    row: QueueRow,
    error: unknown,
    requestId: string | undefined,
  ): Promise<void> {
    const message = messageOf(error);
    logger.error(
      "queue entry could not be processed; it stays queued",
      withRequest({ pk: row.pk, message_id: row.message_id, error: message }, requestId),
    );
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

  return { deliver, release };
}
