import { isAppError, messageOf, retryWithDelays } from "@rd/common";
import { InvalidBucketName, InvalidObjectKey } from "../errors.js";
import { UnsafeDestinationError } from "./destinations.js";
import type { ProcessingContext } from "./processing-context.js";

/** A download or storage failure: the processing is `failed` (and retried by the next check). */
export class PublishFailure extends Error {}

/** Why a publish whose claim another instance took over (or a reprocess deleted) stopped. */
export const CLAIM_LOST =
  "processing stopped: the claim on this release was taken over by another instance " +
  "(a renewal came later than RELEASE_CLAIM_LEASE_SECONDS)";

/** Refusals that are the same on every attempt (a key or bucket the storage refuses). */
const PERMANENT_CODES: ReadonlySet<string> = new Set([
  InvalidObjectKey.code,
  InvalidBucketName.code,
]);

function isPermanent(error: unknown): boolean {
  return (
    error instanceof UnsafeDestinationError ||
    (isAppError(error) && PERMANENT_CODES.has(error.code))
  );
}

/** Stops a publish before its next write once its claim is lost. */
export function throwIfLost(claimLost: AbortSignal): void {
  if (claimLost.aborted) throw new PublishFailure(CLAIM_LOST);
}

/**
 * Runs one download+upload, again after each delay of the policy (slept on the clock); each
 * attempt asks the code host afresh (a new signed URL). Refusals that cannot change are not
 * retried, nor is anything once the claim is lost: no attempt starts and no wait goes on (an
 * asset download in flight is cut too). Every failure that ends it is a `PublishFailure`.
 */
export async function attemptPublish<T>(
  context: Pick<ProcessingContext, "clock" | "logger" | "policy">,
  what: string,
  claimLost: AbortSignal,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await retryWithDelays(context.policy.retryDelaysMs, work, {
      clock: context.clock,
      signal: claimLost,
      shouldRetry: (error) => !isPermanent(error),
      onRetry: (error, attempt) =>
        context.logger.warn("publishing attempt failed, retrying", {
          what,
          attempt,
          reason: messageOf(error),
        }),
    });
  } catch (error) {
    throwIfLost(claimLost);
    throw new PublishFailure(`${what}: ${messageOf(error)}`);
  }
}
