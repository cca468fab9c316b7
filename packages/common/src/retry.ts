import type { Clock } from "./clock.js";

export interface RetryOptions {
  /** Waits through this clock, so tests move time instead of sleeping. */
  readonly clock: Pick<Clock, "sleep">;
  /** Whether a failure may be tried again; every failure when absent. */
  readonly shouldRetry?: (error: unknown) => boolean;
  /** Told of each failure that another attempt follows, before the wait. */
  readonly onRetry?: (error: unknown, failedAttempt: number, delayMs: number) => void;
  /** Once aborted, no attempt starts and no wait goes on: the call rejects with its reason. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `work` (given the attempt number, from 1), and again after each of `delaysMs` while it
 * fails with a failure `shouldRetry` accepts: at most `delaysMs.length + 1` attempts. Rejects
 * with the last failure.
 */
export async function retryWithDelays<T>(
  delaysMs: readonly number[],
  work: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const { clock, shouldRetry, onRetry, signal } = options;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await work(attempt);
    } catch (error) {
      signal?.throwIfAborted();
      const delayMs = delaysMs[attempt - 1];
      if (delayMs === undefined || (shouldRetry && !shouldRetry(error))) throw error;
      onRetry?.(error, attempt, delayMs);
      await clock.sleep(delayMs, signal);
    }
  }
}
