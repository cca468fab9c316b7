import type { Clock } from "@rd/common";
import type { Limits } from "../config/schema.js";
import { Errors } from "../errors.js";
import type {
  QuotaRepository,
  QuotaWindow,
  SharedQuotaRepository,
} from "../state/quota-repository.js";

// Fixed UTC windows: the clock hour and the calendar day (decisions → Sending).
const WINDOW_SECS = { per_hour: 3600, per_day: 86_400 } as const;

/** Gives back what a charge counted; never throws (a failure is the store's to report). */
export type QuotaRefund = () => void;

/**
 * Per-domain quotas on recipients accepted, counted in the state database so a restart does
 * not reset them. A limit of 0 means no limit for that window.
 */
export interface DomainQuota {
  /**
   * Counts `recipients` for `domain`, or throws `quota_exceeded` (429, details `limit` and
   * `resets_at`, the end of the full window) and counts nothing. Returns the refund to call
   * when the message is not accepted after all (signing or queueing failed). Synchronous on the
   * local SQLite database, asynchronous on a shared one (`shared/shared-quota.ts`).
   */
  consume(domain: string, recipients: number, limits: Limits): QuotaRefund | Promise<QuotaRefund>;
}

/** The windows a charge made now counts in. */
export function quotaWindows(clock: Pick<Clock, "now">, limits: Limits): QuotaWindow[] {
  const now = Math.floor(clock.now().getTime() / 1000);
  return (["per_hour", "per_day"] as const).map((period) => ({
    period,
    start: now - (now % WINDOW_SECS[period]),
    limit: limits[period],
  }));
}

/** The `quota_exceeded` error for the windows a charge did not fit in. */
export function quotaExceeded(domain: string, full: readonly QuotaWindow[]): Error {
  // When both are full, the day is what the client must wait for.
  const blocking = full.at(-1) as QuotaWindow;
  const resetsAt = new Date((blocking.start + WINDOW_SECS[blocking.period]) * 1000);
  return Errors.quotaExceeded(`the ${blocking.period} quota of ${domain} is used up`, {
    limit: blocking.period,
    resets_at: resetsAt.toISOString(),
  });
}

/** A `DomainQuota` that answers at once (the local SQLite database). */
export interface LocalDomainQuota extends DomainQuota {
  consume(domain: string, recipients: number, limits: Limits): QuotaRefund;
}

export function createDomainQuota(
  repository: QuotaRepository,
  clock: Pick<Clock, "now">,
): LocalDomainQuota {
  return {
    consume(domain, recipients, limits) {
      const windows = quotaWindows(clock, limits);
      const full = repository.consume(domain, recipients, windows);
      if (!full) return () => repository.refund(domain, recipients, windows);
      throw quotaExceeded(domain, full);
    },
  };
}

/** `createDomainQuota` over the database several instances share: one count for all of them. */
export function createSharedDomainQuota(
  repository: SharedQuotaRepository,
  clock: Pick<Clock, "now">,
): DomainQuota {
  return {
    async consume(domain, recipients, limits) {
      const windows = quotaWindows(clock, limits);
      const full = await repository.consume(domain, recipients, windows);
      if (!full) return () => repository.refund(domain, recipients, windows);
      throw quotaExceeded(domain, full);
    },
  };
}
