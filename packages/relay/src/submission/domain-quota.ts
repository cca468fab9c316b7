import type { Clock } from "@rd/common";
import type { Limits } from "../config/schema.js";
import { Errors } from "../errors.js";
import type { QuotaRepository, QuotaWindow } from "../state/quota-repository.js";

// Fixed UTC windows: the clock hour and the calendar day (decisions → Sending).
const WINDOW_SECS = { per_hour: 3600, per_day: 86_400 } as const;

/**
 * Per-domain quotas on recipients accepted, counted in the state database so a restart does
 * not reset them. A limit of 0 means no limit for that window.
 */
export interface DomainQuota {
  /**
   * Counts `recipients` for `domain`, or throws `quota_exceeded` (429, details `limit` and
   * `resets_at`, the end of the full window) and counts nothing. Returns the refund to call
   * when the message is not accepted after all (signing or queueing failed).
   */
  consume(domain: string, recipients: number, limits: Limits): () => void;
}

export function createDomainQuota(
  repository: QuotaRepository,
  clock: Pick<Clock, "now">,
): DomainQuota {
  return {
    consume(domain, recipients, limits) {
      const now = Math.floor(clock.now().getTime() / 1000);
      const windows: QuotaWindow[] = (["per_hour", "per_day"] as const).map((period) => ({
        period,
        start: now - (now % WINDOW_SECS[period]),
        limit: limits[period],
      }));
      const full = repository.consume(domain, recipients, windows);
      if (!full) return () => repository.refund(domain, recipients, windows);
      // When both are full, the day is what the client must wait for.
      const blocking = full.at(-1) as QuotaWindow;
      const resetsAt = new Date((blocking.start + WINDOW_SECS[blocking.period]) * 1000);
      throw Errors.quotaExceeded(`the ${blocking.period} quota of ${domain} is used up`, {
        limit: blocking.period,
        resets_at: resetsAt.toISOString(),
      });
    },
  };
}
