import type { Clock } from "@rd/common";
import type { DeliveryAttempt, RecipientJob } from "./delivery-attempt.js";
import {
  type DeliveryEvent,
  deferredEvent,
  deliveredEvent,
  failedEvent,
} from "./delivery-events.js";

/** What a finished synchronous delivery reports for one recipient. */
export interface RecipientOutcome {
  ok: boolean;
  /** `entregue via <host>: <smtp reply>`, or the last error (SMTP code first when there is one). */
  detail: string;
  /** Attempts made (1…schedule length). */
  attempts: number;
}

export interface SyncDeliveryDeps {
  attempt: DeliveryAttempt;
  emit: (event: DeliveryEvent) => void;
  /**
   * `sync_retry_delays_secs` (default immediate, +5 s, +10 s, +30 s): the wait before each
   * attempt. Read at each delivery, so configuration changes apply.
   */
  retryDelaysSecs: () => readonly number[];
  clock: Pick<Clock, "sleep">;
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
    const schedule = deps.retryDelaysSecs();
    // An empty schedule still means one attempt: a message is never dropped unattempted.
    const delays = schedule.length > 0 ? schedule : [0];
    const base = { message_id: job.messageId, rcpt: job.rcpt };
    let outcome: RecipientOutcome = { ok: false, detail: "", attempts: 0 };
    for (const [index, delaySecs] of delays.entries()) {
      const attempt = index + 1;
      if (delaySecs > 0) await deps.clock.sleep(delaySecs * 1000);
      const result = await deps.attempt(job, attempt);
      if (result.ok) {
        const { receipt } = result;
        deps.emit(deliveredEvent(base, receipt, attempt));
        return {
          ok: true,
          detail: deliveredDetail(receipt.host, receipt.response),
          attempts: attempt,
        };
      }
      const { error } = result;
      outcome = { ok: false, detail: error.message, attempts: attempt };
      const nextWait = delays[index + 1];
      if (error.permanent || nextWait === undefined) {
        deps.emit(failedEvent(base, error));
        break;
      }
      deps.emit(deferredEvent(base, error, nextWait));
      onRetry?.(attempt, error.message);
    }
    return outcome;
  };
}
