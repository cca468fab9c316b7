import { MAX_QUEUE_ATTEMPTS } from "../config/schema.js";

/** What follows a failed queue attempt. */
export type AfterFailure =
  | { readonly action: "retry"; readonly waitSecs: number }
  | { readonly action: "fail" };

/**
 * The queue's backoff policy. `attempts` counts the attempts made so far, the failed one
 * included; `backoffSecs` is `queue_backoff_secs`, the wait after the 1st, 2nd… failure.
 * A permanent failure (a 5xx, a domain that cannot receive mail) fails at once. A list
 * shorter than the attempts repeats its last value; an empty list retries at the next tick.
 */
export function afterFailedAttempt(
  attempts: number,
  permanent: boolean,
  backoffSecs: readonly number[],
): AfterFailure {
  if (permanent || attempts >= MAX_QUEUE_ATTEMPTS) return { action: "fail" };
  const waitSecs = backoffSecs[Math.min(attempts, backoffSecs.length) - 1] ?? 0;
  return { action: "retry", waitSecs };
}
