/** Seconds before the 1st, 2nd… retry of an event; the last one repeats (exponential, capped). */
export const WEBHOOK_RETRY_DELAYS_SECS = [5, 30, 120, 600, 1800, 3600, 7200] as const;
/** An event not delivered this long after its emission is given up (and recorded so). */
export const WEBHOOK_GIVE_UP_AFTER_MS = 24 * 3600 * 1000;

/** The wait before the next try after `attempts` failed ones (1 = the first attempt failed). */
export function retryDelayMs(attempts: number): number {
  const index = Math.min(Math.max(attempts, 1), WEBHOOK_RETRY_DELAYS_SECS.length) - 1;
  return (WEBHOOK_RETRY_DELAYS_SECS[index] ?? 0) * 1000;
}
