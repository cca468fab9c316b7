import { type Logger, retryWithDelays, systemClock } from "@rd/common";
import {
  type CodeHostPolicy,
  RATE_LIMIT_EXHAUSTED,
  SECONDARY_RATE_LIMIT_HIT,
  waitsOutRateLimit,
} from "./github-octokit.js";

// A bare GET of the REST API, for the request made once per asset: Octokit's per-request
// machinery (its scheduler, hooks, URL templates) cost more CPU than the request itself on a
// release of many small assets. It keeps the Octokit client's policy: retries of 5xx answers
// and network errors, one wait on a near enough rate-limit reset, the same authorization.

/** What a bare request to the REST API needs. */
export interface RestContext {
  /** `https://api.github.com`, a GitHub Enterprise `https://host/api/v3`, or a local stub. */
  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly userAgent: string;
  readonly logger: Logger;
  readonly policy: CodeHostPolicy;
}

/** A failed answer, named like Octokit's `RequestError` so that `statusOf` reads its status. */
class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The authorization header Octokit sends for `token` (a JWT is a bearer token). */
function authorizationOf(token: string): string {
  return token.split(".").length === 3 ? `bearer ${token}` : `token ${token}`;
}

/** How long a rate-limited answer asks to wait (seconds, as the throttling plugin reads it). */
function rateLimitOf(response: Response, message: string) {
  if (response.status !== 403 && response.status !== 429) return null;
  if (/\bsecondary rate\b/i.test(message)) {
    const seconds = Number(response.headers.get("retry-after")) || 60;
    return { seconds, message: SECONDARY_RATE_LIMIT_HIT };
  }
  if (response.headers.get("x-ratelimit-remaining") !== "0") return null;
  const reset = Number(response.headers.get("x-ratelimit-reset")) * 1000;
  // One second past the reset, as GitHub advises.
  const seconds = Math.max(Math.ceil((reset - Date.now()) / 1000) + 1, 0);
  return { seconds, message: RATE_LIMIT_EXHAUSTED };
}

/**
 * GETs `path` of the API with `accept`, without following a redirect (the caller decides where
 * to send the token). Resolves with any answer below 400; rejects with an error `statusOf`
 * reads for a 4xx or 5xx answer (after the retries for a 5xx), with the network's error, or
 * with `signal`'s reason.
 */
export async function restGet(
  context: RestContext,
  path: string,
  accept: string,
  signal: AbortSignal,
): Promise<Response> {
  const { policy, logger } = context;
  const url = `${context.baseUrl}${path}`;
  const headers: Record<string, string> = { accept, "user-agent": context.userAgent };
  if (context.token) headers.authorization = authorizationOf(context.token);
  // The n-th retry waits n² × the base delay, like the retry plugin.
  const delays = Array.from(
    { length: policy.retries },
    (_, n) => (n + 1) ** 2 * policy.retryBaseDelayMs,
  );
  let rateLimited = 0;
  const attempt = async (): Promise<Response> => {
    for (;;) {
      const response = await fetch(url, { headers, redirect: "manual", signal });
      if (response.status < 400) return response;
      const message = await response.text();
      const limit = rateLimitOf(response, message);
      const request = { method: "GET", url, retryCount: rateLimited++ };
      if (
        limit === null ||
        !waitsOutRateLimit(logger, policy, limit.message, { ...request, retryAfter: limit.seconds })
      ) {
        throw new HttpError(response.status, `${response.status} ${message.slice(0, 200)}`);
      }
      await systemClock.sleep(limit.seconds * 1000, signal);
    }
  };
  return retryWithDelays(delays, attempt, {
    clock: systemClock,
    signal,
    shouldRetry: (error) => !(error instanceof HttpError && error.status < 500),
  });
}
