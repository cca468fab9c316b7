import type { Octokit } from "@octokit/rest";
import { type Logger, messageOf } from "@rd/common";
import { DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS } from "../../config.js";
import { CodeHostUnavailable } from "../../errors.js";

/** Retry and rate-limit policy for the code host; defaults below, tests shorten the waits. */
export interface CodeHostPolicy {
  /** Retries after the first attempt for 5xx answers and network errors. */
  readonly retries: number;
  /** The n-th retry waits n² × this many milliseconds (1 s, 4 s, 9 s by default). */
  readonly retryBaseDelayMs: number;
  /** When the rate limit is exhausted, wait for its reset only if it comes within this many seconds. */
  readonly maxRateLimitWaitSeconds: number;
  /** Upper bound of one request (headers and body) when the caller gives no signal of its own. */
  readonly requestTimeoutMs: number;
  /** A streamed download (asset, repository file) is cut when no byte arrives for this long. */
  readonly downloadIdleTimeoutMs: number;
}

export const DEFAULT_CODEHOST_POLICY: CodeHostPolicy = {
  retries: 3,
  retryBaseDelayMs: 1_000,
  maxRateLimitWaitSeconds: 60,
  requestTimeoutMs: 30_000,
  downloadIdleTimeoutMs: DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS * 1000,
};

/**
 * Statuses never retried: every 4xx. A client error (a 414 for an over-long URL, a 422) is the
 * same on every attempt; rate limits (403/429 with their headers) are waited out by the
 * throttling plugin on its own terms, not by the retry plugin.
 */
const NEVER_RETRIED_STATUSES: readonly number[] = Array.from(
  { length: 100 },
  (_, index) => 400 + index,
);

/**
 * Octokit with its retry and throttling plugins, loaded on first use: an idle service does not
 * hold the REST client (some MiB of memory) before its first question to the code host.
 */
function loadRetryingOctokit(): Promise<typeof Octokit> {
  retryingOctokit ??= Promise.all([
    import("@octokit/rest"),
    import("@octokit/plugin-retry"),
    import("@octokit/plugin-throttling"),
    // The plugins add no REST methods, so the instance keeps the plain Octokit type.
  ]).then(([{ Octokit }, { retry }, { throttling }]) => Octokit.plugin(retry, throttling));
  return retryingOctokit;
}
let retryingOctokit: Promise<typeof Octokit> | undefined;

export interface OctokitOptions {
  /** `https://api.github.com`, a GitHub Enterprise `https://host/api/v3`, or a local stub. */
  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly userAgent: string;
  readonly logger: Logger;
  readonly policy: CodeHostPolicy;
}

/**
 * An Octokit that retries 5xx answers and network errors, waits out a rate limit once when
 * its reset is near enough, and bounds every request by the policy's timeout.
 */
export async function createOctokit({
  baseUrl,
  token,
  userAgent,
  logger,
  policy,
}: OctokitOptions): Promise<Octokit> {
  const RetryingOctokit = await loadRetryingOctokit();
  const onLimit =
    (message: string) =>
    (
      retryAfter: number,
      request: { method: string; url: string },
      _octokit: unknown,
      retryCount: number,
    ) =>
      waitsOutRateLimit(logger, policy, message, { ...request, retryAfter, retryCount });
  return new RetryingOctokit({
    baseUrl,
    ...(token ? { auth: token } : {}),
    userAgent,
    log: {
      debug: (message) => logger.debug(message),
      info: (message) => logger.debug(message),
      warn: (message) => logger.warn(message),
      error: (message) => logger.error(message),
    },
    request: {
      fetch: (url: string | URL, init: RequestInit = {}) =>
        fetch(url, {
          ...init,
          signal: init.signal ?? AbortSignal.timeout(policy.requestTimeoutMs),
        }),
    },
    retry: {
      retries: policy.retries,
      retryAfterBaseValue: policy.retryBaseDelayMs,
      doNotRetry: [...NEVER_RETRIED_STATUSES],
    },
    throttle: {
      onRateLimit: onLimit(RATE_LIMIT_EXHAUSTED),
      onSecondaryRateLimit: onLimit(SECONDARY_RATE_LIMIT_HIT),
    },
  });
}

export const RATE_LIMIT_EXHAUSTED = "code host rate limit exhausted";
export const SECONDARY_RATE_LIMIT_HIT = "code host secondary rate limit hit";

/**
 * Whether a request the code host rate-limited is tried again after `retryAfter` seconds: once,
 * when the code host asks for a short enough pause (both rate limits); logged either way.
 */
export function waitsOutRateLimit(
  logger: Logger,
  policy: Pick<CodeHostPolicy, "maxRateLimitWaitSeconds">,
  message: string,
  request: { method: string; url: string; retryAfter: number; retryCount: number },
): boolean {
  const wait = request.retryCount === 0 && request.retryAfter <= policy.maxRateLimitWaitSeconds;
  logger.warn(message, {
    method: request.method,
    url: request.url,
    retry_after_seconds: request.retryAfter,
    waiting: wait,
  });
  return wait;
}

/** The HTTP status of an Octokit `RequestError` (its class is not exported by @octokit/rest). */
export function statusOf(error: unknown): number | undefined {
  if (error instanceof Error && error.name === "HttpError" && "status" in error) {
    return typeof error.status === "number" ? error.status : undefined;
  }
  return undefined;
}

/** A failed request as `CodeHostUnavailable` carrying the code host's status; logged once here. */
export function requestFailure(logger: Logger, error: unknown) {
  const status = statusOf(error);
  logger.warn("code host request failed", { status, reason: messageOf(error) });
  return CodeHostUnavailable(
    status ? `The code host answered ${status}` : "The code host could not be reached",
    { status },
  );
}
