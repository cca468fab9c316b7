import { type Clock, neverSettles, retryWithDelays } from "@rd/common";
import type { DeliveryAttempt, RecipientJob } from "./delivery-attempt.js";
import { DeliveryError } from "./delivery-error.js";
import {
  deferredEvent,
  deliveredEvent,
  type EmitDeliveryEvent,
  failedEvent,
} from "./delivery-events.js";

/** What a finished synchronous delivery reports for one recipient. */
export interface RecipientOutcome {
  ok: boolean;
  /** `entregue via <host>: <smtp reply>`, or the last error (SMTP code first when there is one). */
  detail: string;
  /** Attempts made (1…schedule length). */
  attempts: number;
  /** A failure no retry can cure (5xx, null MX, NXDOMAIN): its recipient is to be suppressed. */
  permanent: boolean;
}

export interface SyncDeliveryDeps {
  attempt: DeliveryAttempt;
  emit: EmitDeliveryEvent;
  /**
   * `sync_retry_delays_secs` (default immediate, +5 s, +10 s, +30 s): the wait before each
   * attempt. Read at each delivery, so configuration changes apply.
   */
  retryDelaysSecs: () => readonly number[];
  clock: Pick<Clock, "sleep">;
  /**
   * Aborted at shutdown: a delivery waiting for its next attempt then never settles (its row,
   * still `sending`, is recovered at the next boot), and no wait keeps the process alive.
   */
  closing?: AbortSignal;
}

/** `onRetry` is told after every failed attempt that another will follow (for the queue row). */
export type SyncDelivery = (
  job: RecipientJob,
  onRetry?: (attempts: number, error: string) => void,
) => Promise<RecipientOutcome>;

/** Success text of the wire contract (`detail`). */
export function deliveredDetail(host: string, response: string): string {
  return `entregue via ${host}: ${response}`;
}

/**
 * Delivers one recipient inside the request: attempts on the synchronous schedule until one
 * succeeds, a permanent (5xx, null MX, NXDOMAIN) error stops it, or the schedule runs out.
 * Emits `delivered`, `deferred` (a retry follows) and `failed` (gave up).
 */
export function createSyncDelivery(deps: SyncDeliveryDeps): SyncDelivery {
  return async (job, onRetry) => {
    // An empty schedule still means one attempt: a message is never dropped unattempted.
    const [firstWaitSecs = 0, ...retryWaitsSecs] = deps.retryDelaysSecs();
    const base = { message_id: job.messageId, rcpt: job.rcpt };
    let attempts = 0;
    try {
      if (firstWaitSecs > 0) await deps.clock.sleep(firstWaitSecs * 1000, deps.closing);
      const receipt = await retryWithDelays(
        retryWaitsSecs.map((secs) => secs * 1000),
        async (attempt) => {
          attempts = attempt;
          const result = await deps.attempt(job, attempt);
          if (!result.ok) throw result.error;
          return result.receipt;
        },
        {
          clock: deps.clock,
          signal: deps.closing,
          shouldRetry: (error) => error instanceof DeliveryError && !error.permanent,
          onRetry: (error, attempt, delayMs) => {
            const failure = error as DeliveryError;
            deps.emit(deferredEvent(base, failure, delayMs / 1000), job.requestId);
            onRetry?.(attempt, failure.message);
          },
        },
      );
      deps.emit(deliveredEvent(base, receipt, attempts), job.requestId);
      const detail = deliveredDetail(receipt.host, receipt.response);
      return { ok: true, detail, attempts, permanent: false };
    } catch (error) {
      if (deps.closing?.aborted) return neverSettles<RecipientOutcome>();
      if (!(error instanceof DeliveryError)) throw error;
      deps.emit(failedEvent(base, error), job.requestId);
      return { ok: false, detail: error.message, attempts, permanent: error.permanent };
    }
  };
}
